// The file panel: every field of the object resource, a preview, download and URL actions, the metadata
// editor and delete. Everything it shows comes from the JSON API's object resource; edits are one v0 PATCH
// guarded by the metageneration the panel loaded, so a concurrent edit is reported instead of overwritten.

import { confirmDialog, toast } from './dialogs.js';
import { $, baseName, copyText, fill, formatBytes, formatDate, h, icon, iconFor, spinner } from './dom.js';

const PREVIEW_TEXT_BYTES = 64 * 1024;
const PREVIEW_IMAGE_BYTES = 32 * 1024 * 1024;
const DOWNLOAD_TOKENS_KEY = 'firebaseStorageDownloadTokens';
const EXPIRIES = [
  ['900', '15 minutes'], ['3600', '1 hour'], ['86400', '1 day'], ['604800', '7 days'],
];

export class DetailsPanel {
  constructor({ onDeleted, onUpdated, onClosed }) {
    this.onDeleted = onDeleted;
    this.onUpdated = onUpdated;
    this.onClosed = onClosed;
    this.panel = $('#details');
    this.body = $('#details-body');
    this.title = $('#details-title');
    this.controller = null;
    $('#details-close').addEventListener('click', () => this.close());
    this.panel.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && !event.defaultPrevented) {
        event.preventDefault();
        this.close();
      }
    });
  }

  get isOpen() {
    return !this.panel.hidden;
  }

  /** Opens the panel on `name` in `bucket` and loads its resource. */
  open(api, bucket, name) {
    this.abort();
    this.api = api;
    this.bucket = bucket;
    this.name = name;
    this.meta = null;
    this.controller = new AbortController();
    this.panel.hidden = false;
    document.body.classList.add('details-open');
    fill(this.title, icon('file'), h('span', { class: 'label' }, baseName(name)));
    this.title.title = name;
    fill(this.body, h('div', { class: 'loading-block' }, spinner('Loading the file'), ' Loading…'));
    this.load(this.controller.signal);
  }

  close() {
    if (!this.isOpen) return;
    this.abort();
    this.panel.hidden = true;
    document.body.classList.remove('details-open');
    this.onClosed();
  }

  abort() {
    if (this.controller) this.controller.abort();
    this.controller = null;
  }

  async load(signal) {
    try {
      const meta = await this.api.getObject(this.bucket, this.name, signal);
      if (signal.aborted) return;
      this.meta = meta;
      this.render(signal);
    } catch (error) {
      if (error.kind === 'aborted' || signal.aborted) return;
      fill(this.body, this.problem(error, 'read this file'));
    }
  }

  /** A denial or failure, in words. */
  problem(error, what) {
    if (error.isDenial) {
      return h('div', { class: 'notice denied', dataset: { testid: 'details-denied' } }, icon('lock', 'icon big'),
        h('div', {}, h('strong', {}, `You may see this file's name, but the rules do not let you ${what}.`)));
    }
    return h('div', { class: 'notice error' }, icon('close', 'icon big'),
      h('div', {}, h('strong', {}, `Could not ${what}. `), error.message,
        error.detail ? h('p', { class: 'muted' }, `The gateway said: ${error.detail}`) : null));
  }

  render(signal) {
    const meta = this.meta;
    fill(this.title, icon(iconFor(meta.contentType)), h('span', { class: 'label' }, baseName(meta.name)));
    const preview = h('section', { class: 'preview', 'aria-label': 'Preview' });
    fill(this.body,
      preview,
      this.actions(),
      h('section', { 'aria-labelledby': 'facts-title' }, h('h3', { id: 'facts-title' }, 'Details'), this.facts(meta)),
      this.editor(meta));
    this.preview(preview, meta, signal);
  }

  facts(meta) {
    const custom = Object.entries(meta.metadata || {}).filter(([key]) => key !== DOWNLOAD_TOKENS_KEY);
    const tokens = (meta.metadata && meta.metadata[DOWNLOAD_TOKENS_KEY]) || '';
    const rows = [
      ['Name', meta.name],
      ['Bucket', meta.bucket],
      ['Size', meta.size !== undefined ? `${formatBytes(meta.size)} (${Number(meta.size).toLocaleString()} bytes)` : '—'],
      ['Content type', meta.contentType],
      ['Created', formatDate(meta.timeCreated, true)],
      ['Updated', formatDate(meta.updated, true)],
      ['Generation', meta.generation],
      ['Metageneration', meta.metageneration],
      ['Storage class', meta.storageClass],
      ['MD5', meta.md5Hash],
      ['CRC32C', meta.crc32c],
      ['ETag', meta.etag],
      ['Cache-Control', meta.cacheControl],
      ['Content-Disposition', meta.contentDisposition],
      ['Content-Encoding', meta.contentEncoding],
      ['Content-Language', meta.contentLanguage],
      ['Download tokens', tokens ? `${tokens.split(',').length} (revealed to readers as download URLs)` : 'none'],
    ];
    const list = h('dl', { class: 'facts' });
    for (const [term, value] of rows) {
      list.append(h('dt', {}, term), h('dd', { class: value ? '' : 'muted' }, value === undefined || value === '' ? '—' : String(value)));
    }
    list.append(h('dt', {}, 'Custom metadata'),
      custom.length ? h('dd', {}, h('ul', { class: 'pairs' }, custom.map(([k, v]) => h('li', {}, h('code', {}, k), ' = ', h('code', {}, v)))))
        : h('dd', { class: 'muted' }, 'none'));
    return list;
  }

  actions() {
    const download = button('download', 'Download', () => this.download(download));
    const copy = button('link', 'Copy download URL', () => this.copyDownloadUrl(copy));
    const del = button('trash', 'Delete', () => this.remove(), 'danger');
    del.dataset.testid = 'delete-button';
    const expiry = h('select', { id: 'signed-expiry', 'aria-label': 'Signed URL lifetime' },
      EXPIRIES.map(([value, label]) => h('option', { value, selected: value === '3600' }, label)));
    const create = button('clock', 'Create signed URL', () => this.createSignedUrl(create, expiry.value, result));
    create.dataset.testid = 'signed-url-create';
    const result = h('div', { class: 'signed-result', 'aria-live': 'polite' });
    return h('section', { class: 'actions', 'aria-label': 'Actions' },
      h('div', { class: 'button-row' }, download, copy, del),
      h('div', { class: 'signed' }, h('label', { for: 'signed-expiry' }, 'Signed URL valid for'), expiry, create),
      result);
  }

  async preview(container, meta, signal) {
    const type = (meta.contentType || '').toLowerCase();
    const size = Number(meta.size || 0);
    const isText = type.startsWith('text/') || /(^|[+/])(json|xml|javascript|yaml|csv)/.test(type);
    if (!type.startsWith('image/') && !isText && type !== 'application/pdf') {
      fill(container, h('p', { class: 'muted' }, `No preview for ${meta.contentType || 'this type'}.`));
      return;
    }
    if (type.startsWith('image/') && size > PREVIEW_IMAGE_BYTES) {
      fill(container, h('p', { class: 'muted' }, `This image is too large to preview (${formatBytes(size)}).`));
      return;
    }
    fill(container, h('div', { class: 'loading-block' }, spinner('Loading the preview'), ' Loading preview…'));
    try {
      if (isText) {
        const bytes = size === 0 ? new Uint8Array() : await this.api.readPrefix(meta.bucket, meta.name, PREVIEW_TEXT_BYTES, signal);
        let text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
        const whole = bytes.length >= size;
        if (whole && type.includes('json')) {
          try {
            text = JSON.stringify(JSON.parse(text), null, 2);
          } catch {
            // Not valid JSON: show it as it is.
          }
        }
        fill(container, h('pre', { class: 'text-preview', tabindex: '0', dataset: { testid: 'text-preview' } }, text),
          whole ? null : h('p', { class: 'muted' }, `Showing the first 64 KiB of ${formatBytes(size)}.`));
        return;
      }
      // Images and PDFs load from a short-lived signed URL: the browser fetches them itself, without the
      // Authorization header, and the signature grants exactly this read.
      const signed = await this.api.signedUrl(meta.bucket, meta.name, 900, signal);
      if (signal.aborted) return;
      const url = this.api.onApiOrigin(signed.url);
      if (type.startsWith('image/')) {
        const image = h('img', { src: url, alt: `Preview of ${baseName(meta.name)}`, dataset: { testid: 'image-preview' } });
        image.addEventListener('error', () => fill(container, h('p', { class: 'muted' }, 'This image could not be displayed.')));
        fill(container, image);
      } else {
        fill(container, h('iframe', { src: url, title: `PDF preview of ${baseName(meta.name)}`, class: 'pdf-preview' }));
      }
    } catch (error) {
      if (error.kind === 'aborted' || signal.aborted) return;
      fill(container, error.isDenial ? h('p', { class: 'muted' }, 'The rules do not let you read this file, so it has no preview.')
        : h('p', { class: 'muted' }, `No preview: ${error.message}`));
    }
  }

  async download(trigger) {
    await this.busy(trigger, async () => {
      // A signed URL, so the browser downloads the bytes itself (streamed to disk, not held in memory).
      const signed = await this.api.signedUrl(this.bucket, this.name, 300, this.controller?.signal);
      const link = h('a', { href: this.api.onApiOrigin(signed.url), download: baseName(this.name), hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
    }, 'download this file');
  }

  async copyDownloadUrl(trigger) {
    await this.busy(trigger, async () => {
      const url = await this.api.downloadUrl(this.bucket, this.name, this.controller?.signal);
      await this.offerCopy(url, 'Download URL');
    }, 'get a download URL');
  }

  async createSignedUrl(trigger, seconds, result) {
    await this.busy(trigger, async () => {
      const signed = await this.api.signedUrl(this.bucket, this.name, Number(seconds), this.controller?.signal);
      const field = h('input', { type: 'text', readonly: true, value: signed.url, 'aria-label': 'Signed URL',
        dataset: { testid: 'signed-url' } });
      const copy = button('link', 'Copy', async () => this.offerCopy(signed.url, 'Signed URL', field));
      fill(result, h('div', { class: 'copy-field' }, field, copy),
        h('p', { class: 'muted' }, `Anyone with this URL can read the file until ${formatDate(signed.expiresAt, true)}.`));
      field.select();
    }, 'create a signed URL');
  }

  async offerCopy(text, what, field) {
    if (await copyText(text)) {
      toast(`${what} copied to the clipboard.`, 'success');
    } else if (field) {
      field.select();
      toast('Press Ctrl+C (⌘C) to copy the selected URL.', 'info');
    } else {
      const input = h('input', { type: 'text', readonly: true, value: text, 'aria-label': what });
      const holder = h('div', { class: 'copy-field' }, input);
      this.body.querySelector('.signed-result')?.replaceChildren(holder);
      input.select();
      toast('Press Ctrl+C (⌘C) to copy the selected URL.', 'info');
    }
  }

  /** Runs an action with its button showing a spinner; failures become a toast in plain words. */
  async busy(trigger, work, what) {
    trigger.disabled = true;
    const mark = spinner();
    trigger.append(mark);
    try {
      await work();
    } catch (error) {
      if (error.kind !== 'aborted') {
        toast(error.isDenial ? `The rules do not let you ${what}.` : `Could not ${what}: ${error.message}`,
          error.isDenial ? 'denied' : 'error');
      }
    } finally {
      mark.remove();
      trigger.disabled = false;
    }
  }

  async remove() {
    const yes = await confirmDialog({
      title: 'Delete this file?',
      message: h('p', {}, 'This permanently deletes ', h('strong', {}, this.name), ' from ', this.bucket, '.'),
      confirmLabel: 'Delete', danger: true, testid: 'confirm-delete',
    });
    if (!yes) return;
    const trigger = this.body.querySelector('[data-testid="delete-button"]');
    const name = this.name;
    await this.busy(trigger, async () => {
      await this.api.deleteObject(this.bucket, name, this.controller?.signal);
      toast(`Deleted ${baseName(name)}.`, 'success');
      this.close();
      this.onDeleted([name]);
    }, 'delete this file');
  }

  editor(meta) {
    const fields = [
      ['contentType', 'Content type', 'application/octet-stream'],
      ['cacheControl', 'Cache-Control', 'public, max-age=3600'],
      ['contentDisposition', 'Content-Disposition', 'inline; filename="…"'],
    ];
    const inputs = {};
    const standard = fields.map(([key, label, placeholder]) => {
      inputs[key] = h('input', { type: 'text', id: `edit-${key}`, value: meta[key] || '', placeholder, autocomplete: 'off',
        spellcheck: 'false', dataset: { testid: `metadata-${key}` } });
      return h('div', { class: 'field' }, h('label', { for: `edit-${key}` }, label), inputs[key]);
    });
    const pairs = h('div', { class: 'pairs-editor', role: 'group', 'aria-label': 'Custom metadata' });
    const original = Object.entries(meta.metadata || {}).filter(([key]) => key !== DOWNLOAD_TOKENS_KEY);
    for (const [key, value] of original) pairs.append(pairRow(key, value));
    const add = button('folderPlus', 'Add key', () => {
      const row = pairRow('', '');
      pairs.append(row);
      row.querySelector('input').focus();
    });
    add.dataset.testid = 'metadata-add';
    const save = h('button', { type: 'submit', class: 'primary', dataset: { testid: 'metadata-save' } }, 'Save changes');
    const status = h('div', { class: 'save-status', role: 'status', 'aria-live': 'polite', dataset: { testid: 'metadata-status' } });
    const form = h('form', { class: 'editor', 'aria-labelledby': 'editor-title', novalidate: true },
      h('h3', { id: 'editor-title' }, 'Edit metadata'),
      standard,
      h('div', { class: 'field' }, h('span', { class: 'field-label' }, 'Custom metadata'), pairs, add),
      h('div', { class: 'button-row' }, save), status);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.save(form, inputs, pairs, save, status);
    });
    return form;
  }

  /** One PATCH with every change, guarded by the metageneration this panel shows. */
  async save(form, inputs, pairs, save, status) {
    const meta = this.meta;
    const patch = {};
    for (const [key, input] of Object.entries(inputs)) {
      const value = input.value.trim();
      if (value !== (meta[key] || '')) patch[key] = value === '' ? null : value;
    }
    const before = Object.fromEntries(Object.entries(meta.metadata || {}).filter(([key]) => key !== DOWNLOAD_TOKENS_KEY));
    const after = {};
    for (const row of pairs.querySelectorAll('.pair')) {
      const key = row.querySelector('.pair-key').value.trim();
      const value = row.querySelector('.pair-value').value;
      if (!key) continue;
      if (key === DOWNLOAD_TOKENS_KEY) {
        fill(status, h('span', { class: 'error-text' }, `${DOWNLOAD_TOKENS_KEY} is managed by the gateway; pick another key.`));
        return;
      }
      if (key in after) {
        fill(status, h('span', { class: 'error-text' }, `The key “${key}” appears twice.`));
        return;
      }
      after[key] = value;
    }
    const custom = {};
    for (const key of Object.keys(before)) if (!(key in after)) custom[key] = null;
    for (const [key, value] of Object.entries(after)) if (before[key] !== value) custom[key] = value;
    if (Object.keys(custom).length) patch.metadata = custom;
    if (!Object.keys(patch).length) {
      fill(status, 'Nothing to save: no field was changed.');
      return;
    }
    save.disabled = true;
    fill(status, spinner('Saving'), ' Saving…');
    try {
      await this.api.patchObject(this.bucket, this.name, patch, meta.metageneration, this.controller?.signal);
      const fresh = await this.api.getObject(this.bucket, this.name, this.controller?.signal);
      this.meta = fresh;
      this.onUpdated(fresh);
      if (!this.controller) return; // the panel was closed meanwhile
      this.render(this.controller.signal);
      const again = this.body.querySelector('[data-testid="metadata-status"]');
      if (again) fill(again, h('span', { class: 'ok-text' }, `Saved. Metageneration is now ${fresh.metageneration}.`));
      toast('Metadata saved.', 'success');
    } catch (error) {
      save.disabled = false;
      if (error.kind === 'aborted') return;
      if (error.kind === 'conflict') {
        const reload = h('button', { type: 'button', dataset: { testid: 'metadata-reload' } }, icon('refresh'), 'Reload the current values');
        reload.addEventListener('click', () => this.open(this.api, this.bucket, this.name));
        fill(status, h('div', { class: 'notice conflict', dataset: { testid: 'metadata-conflict' } },
          h('div', {}, h('strong', {}, 'Not saved: someone else changed this file\'s metadata after you opened it.'),
            h('p', {}, 'Nothing was overwritten. Reload to see their changes, then make yours again.'), reload)));
      } else if (error.isDenial) {
        fill(status, h('div', { class: 'notice denied' }, icon('lock'), h('span', {}, 'The rules do not let you change this file\'s metadata.')));
      } else {
        fill(status, h('span', { class: 'error-text' }, `Not saved. ${error.message}`));
      }
    }
  }
}

function button(iconName, label, onClick, className = '') {
  const element = h('button', { type: 'button', class: className }, icon(iconName), h('span', {}, label));
  element.addEventListener('click', onClick);
  return element;
}

function pairRow(key, value) {
  const keyInput = h('input', { type: 'text', class: 'pair-key', value: key, placeholder: 'key', 'aria-label': 'Key',
    autocomplete: 'off', spellcheck: 'false', dataset: { testid: 'metadata-key' } });
  const valueInput = h('input', { type: 'text', class: 'pair-value', value, placeholder: 'value', 'aria-label': 'Value',
    autocomplete: 'off', spellcheck: 'false', dataset: { testid: 'metadata-value' } });
  const remove = h('button', { type: 'button', class: 'icon-button', 'aria-label': `Remove ${key || 'this key'}` }, icon('close'));
  const row = h('div', { class: 'pair' }, keyInput, valueInput, remove);
  remove.addEventListener('click', () => {
    const next = row.nextElementSibling?.querySelector('input') || row.previousElementSibling?.querySelector('input');
    row.remove();
    if (next) next.focus();
  });
  return row;
}

