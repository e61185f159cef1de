// The signed-in credential: the admin key or a JWT, kept in this tab's sessionStorage only (gone when the tab
// closes) and sent as `Authorization: Bearer`. What the console shows about the identity is read from the JWT's
// payload for display only; the gateway verifies every call.

import { Api } from './api.js';

const KEY = 'portcullis.console.credential';
const BUCKETS_KEY = 'portcullis.console.buckets';

export function storedCredential() {
  const value = sessionStorage.getItem(KEY);
  return value === null ? null : value;
}

export function storeCredential(value) {
  sessionStorage.setItem(KEY, value);
}

export function forgetCredential() {
  sessionStorage.removeItem(KEY);
}

/** Bucket names this tab has opened (a signed-in user cannot list buckets; the picker offers these). */
export function knownBuckets() {
  try {
    const list = JSON.parse(sessionStorage.getItem(BUCKETS_KEY) || '[]');
    return Array.isArray(list) ? list.filter((b) => typeof b === 'string') : [];
  } catch {
    return [];
  }
}

export function rememberBucket(name) {
  const list = knownBuckets().filter((b) => b !== name);
  list.unshift(name);
  sessionStorage.setItem(BUCKETS_KEY, JSON.stringify(list.slice(0, 20)));
}

/** The claims of a JWT (unverified, for display), or null when the text is not one. */
export function jwtClaims(token) {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const base64 = parts[1].replace(/-/g, '+').replace(/_/g, '/');
    const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
    const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes));
    return claims && typeof claims === 'object' ? claims : null;
  } catch {
    return null;
  }
}

/**
 * Checks a credential against the gateway: listing buckets succeeds only for the admin key, is denied (403)
 * for any other accepted credential (a user's JWT, or none), and is refused (401) for one the gateway does
 * not accept. Resolves `{api, admin, buckets, label}`; throws the ApiError of a refusal.
 */
export async function signIn(credential, signal) {
  const api = new Api(credential);
  let admin = false;
  let buckets = [];
  try {
    const result = await api.listBuckets(signal);
    admin = true;
    buckets = (result.items || []).map((b) => b.name);
  } catch (error) {
    if (!error.isDenial) throw error;
  }
  return { api, admin, buckets, label: describeIdentity(credential, admin) };
}

function describeIdentity(credential, admin) {
  if (admin) return 'Admin';
  if (!credential) return 'Anonymous';
  const claims = jwtClaims(credential);
  if (!claims) return 'Signed in';
  return claims.email || claims.sub || claims.user_id || 'Signed in';
}
