// The console's entry point: sign-in, the address (#/b/{bucket}/o/{prefix} or #/playground), and the wiring
// between the file list, the file panel, uploads and the playground.

import { FileBrowser, folderRoute, parentOf } from './browser.js';
import { DetailsPanel } from './details.js';
import { confirmDialog, promptDialog, toast } from './dialogs.js';
import { $, baseName, fill, h, isTyping } from './dom.js';
import { Playground } from './playground.js';
import { forgetCredential, knownBuckets, rememberBucket, signIn, storeCredential, storedCredential } from './session.js';
import { droppedFiles, pickedFiles, UploadManager } from './uploads.js';

const OTHER_BUCKET = '\u0000other';
let session = null;
let signInController = null;

const browser = new FileBrowser({
  onOpenFile: (entry) => details.open(session.api, browser.bucket, entry.name),
  onSelectionChange: (selected) => {
    const button = $('#delete-selected');
    button.hidden = selected.size === 0;
    $('#delete-selected-count').textContent = String(selected.size);
  },
  describeIdentity: () => (session.admin ? 'the admin' : session.label === 'Anonymous' ? 'anonymous callers' : session.label),
  onUnauthenticated: (error) => signOut(error.message),
});
const details = new DetailsPanel({
  onDeleted: (names) => browser.removeFiles(names),
  onUpdated: (meta) => browser.updateFile(meta),
  onClosed: () => {
    browser.setCurrent('');
    const row = $('#list-rows .row[tabindex="0"]');
    if (row) row.focus();
  },
});
const uploads = new UploadManager({ onUploaded: (bucket, meta) => browser.showUploaded(bucket, meta) });
const playground = new Playground();

// Sign-in.

function showSignIn(message = '') {
  $('#app').hidden = true;
  $('#signin').hidden = false;
  fill($('#signin-error'), message);
  const field = $('#signin-key');
  field.value = '';
  field.focus();
}

async function attemptSignIn(credential, { remember }) {
  if (signInController) signInController.abort();
  const controller = new AbortController();
  signInController = controller;
  const submit = $('#signin-submit');
  submit.disabled = true;
  $('#signin-busy').hidden = false;
  fill($('#signin-error'), '');
  try {
    session = await signIn(credential, controller.signal);
    if (remember) storeCredential(credential);
    enter();
  } catch (error) {
    if (error.kind === 'aborted') return;
    forgetCredential();
    showSignIn(error.kind === 'unauthenticated'
      ? `The gateway did not accept this key or token. ${error.detail ? `(${error.detail})` : ''}`
      : error.message);
  } finally {
    if (signInController === controller) signInController = null;
    submit.disabled = false;
    $('#signin-busy').hidden = true;
  }
}

function signOut(message = '') {
  forgetCredential();
  session = null;
  details.close();
  window.history.replaceState(null, '', window.location.pathname);
  showSignIn(message);
}

function enter() {
  $('#signin').hidden = true;
  $('#app').hidden = false;
  fill($('#identity'), session.label);
  $('#identity').dataset.role = session.admin ? 'admin' : 'user';
  for (const bucket of session.buckets) rememberBucket(bucket);
  route();
}

// Buckets.

function bucketChoices() {
  const names = session.admin ? session.buckets : knownBuckets();
  return [...new Set(names)];
}

function renderBucketPicker(current) {
  const select = $('#bucket-select');
  const names = bucketChoices();
  if (current && !names.includes(current)) names.unshift(current);
  fill(select,
    current ? null : h('option', { value: '', selected: true, disabled: true }, 'Choose a bucket…'),
    names.map((name) => h('option', { value: name, selected: name === current }, name)),
    h('option', { value: OTHER_BUCKET }, session.admin ? 'Other bucket name…' : 'Open a bucket by name…'));
}

async function askForBucket() {
  const name = await promptDialog({
    title: 'Open a bucket',
    label: 'Bucket name',
    placeholder: 'my-bucket',
    confirmLabel: 'Open',
    validate: (text) => (!text ? 'Enter a bucket name.' : /[^A-Za-z0-9._-]/.test(text) ? 'Bucket names use letters, digits, “-”, “_” and “.”.' : ''),
  });
  if (name === null) {
    renderBucketPicker(browser.bucket);
    return;
  }
  try {
    await session.api.getBucket(name);
    rememberBucket(name);
    window.location.hash = folderRoute(name, '');
  } catch (error) {
    toast(error.kind === 'notFound' ? `This gateway has no bucket named “${name}”.` : `Could not open “${name}”: ${error.message}`, 'error');
    renderBucketPicker(browser.bucket);
  }
}

// Routing.

function parseRoute() {
  const hash = window.location.hash;
  if (hash === '#/playground') return { view: 'playground' };
  const match = /^#\/b\/([^/]+)\/o\/(.*)$/.exec(hash);
  if (!match) return { view: 'files', bucket: '', prefix: '' };
  try {
    const bucket = decodeURIComponent(match[1]);
    const prefix = match[2].split('/').map(decodeURIComponent).join('/');
    return { view: 'files', bucket, prefix: prefix && !prefix.endsWith('/') ? `${prefix}/` : prefix };
  } catch {
    return { view: 'files', bucket: '', prefix: '' };
  }
}

function route() {
  if (!session) return;
  const target = parseRoute();
  const onPlayground = target.view === 'playground';
  $('#files-view').hidden = onPlayground;
  $('#playground-view').hidden = !onPlayground;
  $('#tab-files').setAttribute('aria-current', onPlayground ? 'false' : 'page');
  $('#tab-playground').setAttribute('aria-current', onPlayground ? 'page' : 'false');
  $('#tab-files').href = browser.bucket ? folderRoute(browser.bucket, browser.prefix) : '#/';
  if (onPlayground) {
    details.close();
    playground.prepare(session.api, session.admin, browser.bucket || bucketChoices()[0], browser.prefix.replace(/\/$/, ''));
    return;
  }
  let { bucket, prefix } = target;
  if (!bucket) {
    bucket = browser.bucket || bucketChoices()[0];
    if (bucket) {
      window.location.replace(folderRoute(bucket, ''));
      return;
    }
    renderBucketPicker('');
    $('#files-view').dataset.state = 'no-bucket';
    fill($('#breadcrumb'));
    fill($('#list-notice'), h('div', {}, h('strong', {}, 'Choose a bucket to browse.'),
      h('p', {}, 'Your sign-in cannot list the buckets this gateway serves; open one by name with the bucket picker.')));
    $('#list-notice').className = 'notice empty';
    $('#list-notice').hidden = false;
    return;
  }
  $('#files-view').dataset.state = '';
  rememberBucket(bucket);
  renderBucketPicker(bucket);
  if (bucket !== browser.bucket || prefix !== browser.prefix) {
    details.close();
    browser.open(session.api, bucket, prefix);
    $('#tab-files').href = folderRoute(bucket, prefix);
  }
}

// Toolbar actions.

async function newFolder() {
  const name = await promptDialog({
    title: 'New folder',
    label: `Folder name (in ${browser.bucket}/${browser.prefix})`,
    confirmLabel: 'Create',
    validate: (text) => (!text ? 'Enter a name.' : text.includes('/') ? 'A folder name cannot contain “/”.' : ''),
  });
  if (name === null) return;
  const prefix = `${browser.prefix}${name}/`;
  browser.addPendingFolder(prefix);
  toast(`Folder “${name}” is ready: it is saved once it holds a file.`, 'info');
  window.location.hash = folderRoute(browser.bucket, prefix);
}

async function deleteSelected() {
  const names = [...browser.selected];
  if (!names.length) return;
  const yes = await confirmDialog({
    title: `Delete ${names.length} file${names.length === 1 ? '' : 's'}?`,
    message: h('div', {}, h('p', {}, `This permanently deletes these files from ${browser.bucket}:`),
      h('ul', { class: 'delete-list' }, names.slice(0, 8).map((n) => h('li', {}, baseName(n))),
        names.length > 8 ? h('li', {}, `and ${names.length - 8} more`) : null)),
    confirmLabel: 'Delete', danger: true, testid: 'confirm-delete',
  });
  if (!yes) return;
  const api = session.api;
  const bucket = browser.bucket;
  const deleted = [];
  const denied = [];
  const failed = [];
  const progress = toast(`Deleting ${names.length} files…`, 'info', 0);
  const queue = [...names];
  async function worker() {
    while (queue.length) {
      const name = queue.shift();
      try {
        await api.deleteObject(bucket, name);
        deleted.push(name);
      } catch (error) {
        (error.isDenial ? denied : failed).push(name);
      }
    }
  }
  await Promise.all([worker(), worker(), worker(), worker()]);
  progress.remove();
  browser.removeFiles(deleted);
  if (details.isOpen && deleted.includes(details.name)) details.close();
  const parts = [`Deleted ${deleted.length} file${deleted.length === 1 ? '' : 's'}.`];
  if (denied.length) parts.push(`The rules did not let you delete ${denied.length}.`);
  if (failed.length) parts.push(`${failed.length} could not be deleted; try again.`);
  toast(parts.join(' '), failed.length ? 'error' : denied.length ? 'denied' : 'success');
}

function startUploads(entries) {
  if (!entries.length || !browser.bucket) return;
  uploads.add(session.api, browser.bucket, browser.prefix, entries);
}

function wire() {
  $('#signin-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const credential = $('#signin-key').value.trim();
    if (!credential) {
      fill($('#signin-error'), 'Paste the admin key or a JWT first.');
      return;
    }
    attemptSignIn(credential, { remember: true });
  });
  $('#signin-anonymous').addEventListener('click', () => attemptSignIn('', { remember: true }));
  $('#sign-out').addEventListener('click', () => {
    if (uploads.active && !window.confirm('Uploads are still running. Sign out anyway?')) return;
    signOut('');
  });
  $('#bucket-select').addEventListener('change', (event) => {
    const value = event.target.value;
    if (value === OTHER_BUCKET) askForBucket();
    else if (value) window.location.hash = folderRoute(value, '');
  });
  $('#upload-input').addEventListener('change', (event) => {
    startUploads(pickedFiles(event.target));
    event.target.value = '';
  });
  $('#upload-folder-input').addEventListener('change', (event) => {
    startUploads(pickedFiles(event.target));
    event.target.value = '';
  });
  $('#new-folder').addEventListener('click', newFolder);
  $('#delete-selected').addEventListener('click', deleteSelected);
  $('#refresh').addEventListener('click', () => browser.reload());
  $('#go-up').addEventListener('click', () => {
    if (browser.prefix) window.location.hash = folderRoute(browser.bucket, parentOf(browser.prefix));
  });

  const view = $('#files-view');
  let depth = 0;
  view.addEventListener('dragenter', (event) => {
    if (!event.dataTransfer || ![...event.dataTransfer.types].includes('Files')) return;
    depth += 1;
    view.classList.add('dropping');
    fill($('#drop-target'), `${browser.bucket}/${browser.prefix}`);
  });
  view.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (!depth) view.classList.remove('dropping');
  });
  view.addEventListener('dragover', (event) => {
    if (event.dataTransfer && [...event.dataTransfer.types].includes('Files')) event.preventDefault();
  });
  view.addEventListener('drop', async (event) => {
    event.preventDefault();
    depth = 0;
    view.classList.remove('dropping');
    startUploads(await droppedFiles(event.dataTransfer));
  });

  document.addEventListener('keydown', (event) => {
    if (!session || isTyping(event) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === '/' && !$('#files-view').hidden) {
      event.preventDefault();
      $('#filter').focus();
    } else if (event.key === 'Escape' && details.isOpen) {
      details.close();
    }
  });
  window.addEventListener('hashchange', route);
  window.addEventListener('beforeunload', (event) => {
    if (uploads.active) event.preventDefault();
  });
}

wire();
const credential = storedCredential();
if (credential === null) showSignIn();
else attemptSignIn(credential, { remember: false });
