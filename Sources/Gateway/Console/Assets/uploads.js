// Uploads over the v0 resumable protocol (X-Goog-Upload): start, then 4 MiB chunks at explicit offsets, the
// last one with `finalize`. A paused, failed or interrupted upload asks the gateway how many bytes it holds
// (`query`) and continues from there; transient failures (network, 429, 5xx) retry on their own with
// backoff, others wait for the person to press Retry. Each file has its own bar and buttons; one bar adds
// them all up.

import { errorForStatus } from './api.js';
import { $, formatBytes, h, icon } from './dom.js';

/** A multiple of the protocol's 256 KiB granularity. */
export const CHUNK_BYTES = 4 * 1024 * 1024;
const PARALLEL = 3;
const AUTO_RETRIES = 4;

export class UploadManager {
  constructor({ onUploaded }) {
    this.onUploaded = onUploaded;
    this.items = [];
    this.panel = $('#uploads');
    this.list = $('#upload-list');
    this.bar = $('#upload-progress');
    this.summary = $('#upload-summary');
    this.percent = $('#upload-percent');
    $('#uploads-clear').addEventListener('click', () => this.clearFinished());
    $('#uploads-toggle').addEventListener('click', () => {
      const collapsed = this.panel.classList.toggle('collapsed');
      $('#uploads-toggle').setAttribute('aria-expanded', String(!collapsed));
    });
    // The tray floats over the bottom of the file list: while it shows, the list gets that much room to
    // scroll into, so no row stays hidden under it.
    new ResizeObserver(() => this.reserveRoom()).observe(this.panel);
  }

  /** Tells the layout how tall the tray is (0 when hidden): `--uploads-room` pads the file list's end. */
  reserveRoom() {
    const room = this.panel.hidden ? 0 : this.panel.getBoundingClientRect().height + 24;
    document.body.style.setProperty('--uploads-room', `${Math.ceil(room)}px`);
  }

  /** Queues `entries` (`{file, path}`, path relative to `prefix`) for `bucket`. */
  add(api, bucket, prefix, entries) {
    for (const { file, path } of entries) {
      const item = new UploadItem(this, api, bucket, prefix + path, file);
      this.items.push(item);
      this.list.append(item.element);
    }
    this.panel.hidden = false;
    this.panel.classList.remove('collapsed');
    this.reserveRoom();
    this.pump();
    this.update();
  }

  /** Starts queued uploads while fewer than PARALLEL are running. */
  pump() {
    let running = this.items.filter((i) => i.state === 'starting' || i.state === 'uploading').length;
    for (const item of this.items) {
      if (running >= PARALLEL) break;
      if (item.state === 'queued') {
        running += 1;
        item.run();
      }
    }
  }

  /** Recomputes the aggregate bar and summary (cancelled files leave the total). */
  update() {
    const counted = this.items.filter((i) => i.state !== 'cancelled');
    const total = counted.reduce((sum, i) => sum + i.size, 0);
    const sent = counted.reduce((sum, i) => sum + i.progressBytes, 0);
    const done = counted.filter((i) => i.state === 'done').length;
    const failed = counted.filter((i) => i.state === 'failed').length;
    const allDone = counted.length > 0 && done === counted.length;
    const fraction = allDone ? 1 : total > 0 ? Math.min(sent / total, done === counted.length ? 1 : 0.999) : 0;
    const percent = Math.floor(fraction * 100);
    this.bar.max = 100;
    this.bar.value = percent;
    this.bar.dataset.percent = String(percent);
    this.bar.setAttribute('aria-valuetext', `${percent}%`);
    this.percent.textContent = `${percent}%`;
    let text = `${done} of ${counted.length} file${counted.length === 1 ? '' : 's'} uploaded`;
    text += ` · ${formatBytes(Math.min(sent, total))} of ${formatBytes(total)}`;
    if (failed) text += ` · ${failed} failed`;
    this.summary.textContent = text;
    this.panel.dataset.state = allDone ? 'done' : failed ? 'failed' : 'active';
  }

  clearFinished() {
    this.items = this.items.filter((item) => {
      const finished = item.state === 'done' || item.state === 'cancelled';
      if (finished) item.element.remove();
      return !finished;
    });
    if (!this.items.length) this.panel.hidden = true;
    this.reserveRoom();
    this.update();
  }

  get active() {
    return this.items.some((i) => !['done', 'cancelled', 'failed'].includes(i.state));
  }
}

class UploadItem {
  constructor(manager, api, bucket, name, file) {
    this.manager = manager;
    this.api = api;
    this.bucket = bucket;
    this.name = name;
    this.file = file;
    this.size = file.size;
    this.contentType = file.type || guessType(name);
    this.state = 'queued';
    this.uploadUrl = null;
    this.sent = 0;
    this.inflight = 0;
    this.xhr = null;
    this.controller = null;
    this.failures = 0;
    this.build();
  }

  get progressBytes() {
    return this.state === 'done' ? this.size : this.sent + this.inflight;
  }

  build() {
    this.bar = h('progress', { max: '100', value: '0', 'aria-label': `Upload of ${this.name}`, dataset: { testid: 'upload-item-progress' } });
    this.status = h('span', { class: 'upload-status', role: 'status' }, 'Waiting');
    this.pauseButton = iconButton('pause', `Pause ${this.name}`, () => this.pause());
    this.resumeButton = iconButton('play', `Resume ${this.name}`, () => this.resume());
    this.retryButton = iconButton('retry', `Retry ${this.name}`, () => this.retry());
    this.cancelButton = iconButton('close', `Cancel ${this.name}`, () => this.cancel());
    this.element = h('li', { class: 'upload-item', dataset: { testid: 'upload-item', name: this.name, state: this.state } },
      h('div', { class: 'upload-line' }, h('span', { class: 'upload-name', title: this.name }, this.name),
        h('span', { class: 'upload-size' }, formatBytes(this.size))),
      this.bar,
      h('div', { class: 'upload-line' }, this.status,
        h('span', { class: 'upload-buttons' }, this.pauseButton, this.resumeButton, this.retryButton, this.cancelButton)));
    this.render();
  }

  set(state, message) {
    this.state = state;
    if (message !== undefined) this.message = message;
    this.render();
    this.manager.update();
  }

  render() {
    const percent = this.state === 'done' ? 100 : this.size ? Math.floor(((this.sent + this.inflight) / this.size) * 100) : 0;
    this.bar.value = percent;
    this.bar.dataset.percent = String(percent);
    this.element.dataset.state = this.state;
    const words = {
      queued: 'Waiting',
      starting: 'Starting…',
      uploading: `${percent}%`,
      paused: `Paused at ${percent}%`,
      done: 'Uploaded',
      cancelled: 'Cancelled',
      failed: this.message || 'Failed',
    };
    this.status.textContent = this.state === 'uploading' && this.message ? this.message : words[this.state];
    this.status.className = `upload-status ${this.state}${this.denied ? ' denied' : ''}`;
    this.pauseButton.hidden = !['starting', 'uploading', 'queued'].includes(this.state);
    this.resumeButton.hidden = this.state !== 'paused';
    this.retryButton.hidden = this.state !== 'failed';
    this.cancelButton.hidden = ['done', 'cancelled'].includes(this.state);
  }

  async run() {
    this.set('starting', '');
    this.denied = false;
    try {
      if (this.uploadUrl) {
        const { status, received } = await this.api.queryUpload(this.uploadUrl);
        if (status === 'final') return this.finish(null);
        this.sent = received;
      } else {
        this.controller = new AbortController();
        this.uploadUrl = await this.api.startUpload(this.bucket, this.name, this.size, this.contentType, this.controller.signal);
        this.sent = 0;
      }
      if (this.state !== 'starting') return; // paused or cancelled meanwhile
      this.set('uploading', '');
      for (;;) {
        if (this.state !== 'uploading') return;
        const end = Math.min(this.sent + CHUNK_BYTES, this.size);
        const last = end === this.size;
        const result = await this.sendChunk(this.file.slice(this.sent, end), this.sent, last);
        this.inflight = 0;
        this.failures = 0;
        if (result.status === 'final') return this.finish(result.body);
        this.sent = result.received;
        this.render();
        this.manager.update();
      }
    } catch (error) {
      this.inflight = 0;
      this.xhr = null;
      if (this.state === 'paused' || this.state === 'cancelled') return;
      if (error.kind === 'notFound' && this.uploadUrl) {
        // The gateway no longer knows the upload (expired or cancelled elsewhere): start it over.
        this.uploadUrl = null;
        this.sent = 0;
      }
      const transient = ['network', 'busy', 'server'].includes(error.kind);
      if (transient && this.failures < AUTO_RETRIES) {
        this.failures += 1;
        const seconds = 2 ** (this.failures - 1);
        this.set('uploading', `Connection problem; retrying in ${seconds} s…`);
        setTimeout(() => {
          if (this.state === 'uploading') {
            this.state = 'queued';
            this.run();
          }
        }, seconds * 1000);
        return;
      }
      this.denied = error.isDenial;
      this.set('failed', error.isDenial ? 'The rules do not let you upload here.' : error.message);
    } finally {
      this.controller = null;
      this.manager.pump();
    }
  }

  finish(body) {
    this.sent = this.size;
    this.inflight = 0;
    this.set('done', '');
    let meta = null;
    try {
      meta = body ? JSON.parse(body) : null;
    } catch {
      meta = null;
    }
    this.manager.onUploaded(this.bucket, meta || { name: this.name, size: String(this.size), contentType: this.contentType, updated: new Date().toISOString() });
  }

  /** One chunk at `offset`; XMLHttpRequest because fetch reports no upload progress. */
  sendChunk(blob, offset, last) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      this.xhr = xhr;
      xhr.open('POST', this.uploadUrl);
      for (const [key, value] of Object.entries(this.api.headers())) xhr.setRequestHeader(key, value);
      xhr.setRequestHeader('X-Goog-Upload-Protocol', 'resumable');
      xhr.setRequestHeader('X-Goog-Upload-Command', last ? 'upload, finalize' : 'upload');
      xhr.setRequestHeader('X-Goog-Upload-Offset', String(offset));
      xhr.upload.addEventListener('progress', (event) => {
        this.inflight = Math.min(event.loaded, blob.size);
        this.render();
        this.manager.update();
      });
      xhr.addEventListener('load', () => {
        this.xhr = null;
        if (xhr.status >= 200 && xhr.status < 300) {
          resolve({
            status: xhr.getResponseHeader('X-Goog-Upload-Status'),
            received: Number(xhr.getResponseHeader('X-Goog-Upload-Size-Received') || offset + blob.size),
            body: xhr.responseText,
          });
        } else {
          let detail = '';
          try {
            detail = JSON.parse(xhr.responseText).error.message || '';
          } catch {
            detail = '';
          }
          reject(errorForStatus(xhr.status, 'upload here', detail));
        }
      });
      xhr.addEventListener('error', () => reject(errorForStatus(0, 'upload here')));
      xhr.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { kind: 'aborted' })));
      xhr.send(blob);
    });
  }

  pause() {
    if (this.state === 'queued') {
      this.set('paused');
      return;
    }
    this.set('paused');
    if (this.controller) this.controller.abort();
    if (this.xhr) this.xhr.abort();
  }

  resume() {
    this.set('queued');
    this.manager.pump();
  }

  retry() {
    this.failures = 0;
    this.set('queued', '');
    this.manager.pump();
  }

  cancel() {
    const url = this.uploadUrl;
    this.set('cancelled');
    if (this.controller) this.controller.abort();
    if (this.xhr) this.xhr.abort();
    // Tell the gateway, so it drops what it staged (best effort: it expires idle uploads anyway).
    if (url) this.api.cancelUpload(url).catch(() => {});
    this.manager.pump();
  }
}

function iconButton(name, label, onClick) {
  const button = h('button', { type: 'button', class: 'icon-button', 'aria-label': label, title: label.split(' ')[0] }, icon(name));
  button.addEventListener('click', onClick);
  return button;
}

const TYPES = {
  txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', html: 'text/html', css: 'text/css', js: 'text/javascript',
  json: 'application/json', xml: 'application/xml', pdf: 'application/pdf', png: 'image/png', jpg: 'image/jpeg',
  jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', svg: 'image/svg+xml', mp4: 'video/mp4', zip: 'application/zip',
};

/** A content type from the extension when the browser gives none. */
function guessType(name) {
  const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  return TYPES[ext] || 'application/octet-stream';
}

/** Files and folders dropped on the page, with their paths (folders walked recursively). */
export async function droppedFiles(dataTransfer) {
  const entries = [...dataTransfer.items]
    .filter((item) => item.kind === 'file')
    .map((item) => (item.webkitGetAsEntry ? item.webkitGetAsEntry() : null));
  if (!entries.length || entries.some((e) => !e)) {
    return [...dataTransfer.files].map((file) => ({ file, path: file.name }));
  }
  const out = [];
  async function walk(entry, path) {
    if (entry.isFile) {
      const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
      out.push({ file, path: path + file.name });
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
        if (!batch.length) break;
        for (const child of batch) await walk(child, `${path}${entry.name}/`);
      }
    }
  }
  for (const entry of entries) await walk(entry, '');
  return out;
}

/** Files chosen with an <input type=file> (a folder input gives each file's path inside the folder). */
export function pickedFiles(input) {
  return [...input.files].map((file) => ({ file, path: file.webkitRelativePath || file.name }));
}

