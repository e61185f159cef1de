// The gateway's public APIs as the console uses them: the Cloud Storage JSON API for buckets, listings and
// object resources; the Firebase v0 API for metadata updates, deletes, download and signed URLs and resumable
// uploads; and the admin rules explain endpoint. Every call carries the signed-in credential as
// `Authorization: Bearer` and an AbortSignal, and every failure becomes an ApiError whose kind says what
// happened in terms a person can act on.

/** A failed call. `kind`: network | aborted | unauthenticated | denied | notFound | conflict | tooLarge |
 *  busy | invalid | server. `message` is plain words; `detail` is the server's own message. */
export class ApiError extends Error {
  constructor(kind, status, message, detail = '') {
    super(message);
    this.kind = kind;
    this.status = status;
    this.detail = detail;
  }

  /** A denial by the rules (or by admin-only endpoints): shown as such, not as a failure. */
  get isDenial() {
    return this.kind === 'denied';
  }
}

const enc = encodeURIComponent;

/** What a status means, in words; `action` completes "You may not …" / "Could not …". */
function describe(status, action, detail) {
  if (status === 401) {
    return ['unauthenticated', 'Your sign-in was not accepted (it may have expired). Sign in again.'];
  }
  if (status === 403) return ['denied', `The rules do not allow you to ${action}.`];
  if (status === 404) return ['notFound', 'It does not exist (it may have just been deleted).'];
  if (status === 409 || status === 412) {
    return ['conflict', 'It was changed by someone else since you loaded it.'];
  }
  if (status === 413) return ['tooLarge', 'It is larger than this gateway accepts.'];
  if (status === 429 || status === 503) return ['busy', 'The gateway is busy right now. Try again in a moment.'];
  if (status >= 500) return ['server', `The gateway failed to ${action} (error ${status}).`];
  return ['invalid', `The gateway refused to ${action}: ${detail || `error ${status}`}.`];
}

/** Where the APIs live. On the gateway's own listener the console is {gateway}/console/ and the APIs are one
 *  level up, whatever path prefix a proxy adds; on a listener of its own (`--console-listen`, its own origin)
 *  the page names the API's base URL in `<meta name="portcullis-api">`. */
function apiBase() {
  const named = document.querySelector('meta[name="portcullis-api"]')?.content;
  if (named) return new URL(named.endsWith('/') ? named : `${named}/`);
  return new URL('../', window.location.href);
}

export class Api {
  /** `credential`: the admin key or a JWT, or '' for anonymous calls. */
  constructor(credential) {
    this.credential = credential;
    this.base = apiBase();
  }

  url(path, query = {}) {
    const url = new URL(path, this.base);
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && value !== null && value !== '') url.searchParams.set(key, value);
    }
    return url.toString();
  }

  /** A URL the gateway built (upload, signed) on the API's origin as this page reaches it, so the page's
   *  policy allows it. */
  onApiOrigin(text) {
    const url = new URL(text, this.base);
    return new URL(url.pathname + url.search, this.base.origin).toString();
  }

  headers(extra = {}) {
    const headers = { ...extra };
    if (this.credential) headers.Authorization = `Bearer ${this.credential}`;
    return headers;
  }

  /** One call; resolves the Response when it is 2xx, else throws an ApiError. */
  async call(method, path, { query, headers, body, json, signal, action = 'do that' } = {}) {
    const init = { method, headers: this.headers(headers), signal, cache: 'no-store' };
    if (json !== undefined) {
      init.headers['Content-Type'] = 'application/json; charset=utf-8';
      init.body = JSON.stringify(json);
    } else if (body !== undefined) {
      init.body = body;
    }
    let response;
    try {
      response = await fetch(this.url(path, query), init);
    } catch (error) {
      if (error && error.name === 'AbortError') throw new ApiError('aborted', 0, 'Cancelled.');
      throw new ApiError('network', 0, 'Cannot reach the gateway. Check the connection and try again.');
    }
    if (response.ok) return response;
    throw await ApiError.from(response, action);
  }

  async json(method, path, options) {
    const response = await this.call(method, path, options);
    const text = await response.text();
    return text ? JSON.parse(text) : {};
  }

  // Buckets (JSON API).
  listBuckets(signal) {
    return this.json('GET', 'storage/v1/b', { signal, query: { fields: 'items(name)' }, action: 'list the buckets' });
  }

  getBucket(bucket, signal) {
    return this.json('GET', `storage/v1/b/${enc(bucket)}`, { signal, action: 'open this bucket' });
  }

  // Objects.
  /** One page of a folder: `{items: [...], prefixes: [...], nextPageToken}` (items carry only what the
   *  listing needs; an item the caller may list but not read has no size). */
  listObjects(bucket, { prefix, pageToken, maxResults = 1000, signal }) {
    return this.json('GET', `storage/v1/b/${enc(bucket)}/o`, {
      signal,
      action: 'list this folder',
      query: {
        prefix,
        delimiter: '/',
        maxResults,
        pageToken,
        fields: 'nextPageToken,prefixes,items(name,size,contentType,updated)',
      },
    });
  }

  /** The full object resource (JSON API). */
  getObject(bucket, name, signal) {
    return this.json('GET', `storage/v1/b/${enc(bucket)}/o/${enc(name)}`, { signal, action: 'read this file' });
  }

  /** One v0 PATCH (null removes a field or a custom key), refused with 412 when the object's metageneration
   *  is no longer `metageneration`. */
  patchObject(bucket, name, patch, metageneration, signal) {
    return this.json('PATCH', `v0/b/${enc(bucket)}/o/${enc(name)}`, {
      signal, json: patch, query: { ifMetagenerationMatch: metageneration }, action: 'change this file',
    });
  }

  deleteObject(bucket, name, signal) {
    return this.call('DELETE', `v0/b/${enc(bucket)}/o/${enc(name)}`, { signal, action: 'delete this file' });
  }

  /** The Firebase-style download URL (with a download token; minted on first use). */
  async downloadUrl(bucket, name, signal) {
    const result = await this.json('GET', `v0/b/${enc(bucket)}/o/${enc(name)}`, {
      signal, query: { alt: 'downloadUrl' }, action: 'get a download URL',
    });
    return result.downloadUrl;
  }

  /** An expiring signed URL that reads the object: `{url, expiresAt}`. */
  async signedUrl(bucket, name, expiresIn, signal) {
    const url = this.url(`v0/b/${enc(bucket)}/o/${enc(name)}`) + '?signedUrl';
    const response = await this.call('POST', url, {
      signal, json: { method: 'GET', expiresIn }, action: 'create a signed URL',
    });
    return response.json();
  }

  /** The first `limit` bytes of an object. */
  async readPrefix(bucket, name, limit, signal) {
    const response = await this.call('GET', `v0/b/${enc(bucket)}/o/${enc(name)}`, {
      signal, query: { alt: 'media' }, headers: { Range: `bytes=0-${limit - 1}` }, action: 'read this file',
    });
    return new Uint8Array(await response.arrayBuffer());
  }

  /** How the server's rules decide a request (admin only). */
  explain(request, signal) {
    return this.json('POST', 'admin/v1/rules/explain', {
      signal, json: request, action: 'ask the server to explain its rules (that needs the admin key)',
    });
  }

  /** Opens a resumable upload; resolves its upload URL (on the API's origin). */
  async startUpload(bucket, name, size, contentType, signal) {
    const response = await this.call('POST', `v0/b/${enc(bucket)}/o`, {
      signal,
      query: { name },
      action: 'upload here',
      headers: {
        'X-Goog-Upload-Protocol': 'resumable',
        'X-Goog-Upload-Command': 'start',
        'X-Goog-Upload-Header-Content-Length': String(size),
        'X-Goog-Upload-Header-Content-Type': contentType,
      },
      json: { name, contentType },
    });
    const url = response.headers.get('X-Goog-Upload-URL');
    if (!url) throw new ApiError('server', response.status, 'The gateway did not start the upload.');
    return this.onApiOrigin(url);
  }

  /** Asks an upload how many bytes the gateway holds: `{status, received}`. */
  async queryUpload(uploadUrl, signal) {
    const response = await this.call('POST', uploadUrl, {
      signal,
      action: 'resume this upload',
      headers: { 'X-Goog-Upload-Protocol': 'resumable', 'X-Goog-Upload-Command': 'query' },
    });
    return {
      status: response.headers.get('X-Goog-Upload-Status'),
      received: Number(response.headers.get('X-Goog-Upload-Size-Received') || 0),
    };
  }

  async cancelUpload(uploadUrl) {
    await this.call('POST', uploadUrl, {
      action: 'cancel this upload',
      headers: { 'X-Goog-Upload-Protocol': 'resumable', 'X-Goog-Upload-Command': 'cancel' },
    });
  }
}

ApiError.from = async function from(response, action) {
  let detail = '';
  try {
    const body = await response.json();
    detail = (body && body.error && body.error.message) || '';
  } catch {
    // Not JSON: the status says enough.
  }
  const [kind, message] = describe(response.status, action, detail);
  return new ApiError(kind, response.status, message, detail);
};

/** An ApiError for a status seen outside fetch (the upload's XMLHttpRequest). */
export function errorForStatus(status, action, detail = '') {
  if (status === 0) return new ApiError('network', 0, 'Cannot reach the gateway. Check the connection and try again.');
  const [kind, message] = describe(status, action, detail);
  return new ApiError(kind, status, message, detail);
}
