// The file list: one folder of one bucket, listed through the JSON API with prefix + delimiter, 1,000 entries
// a page. Pages are fetched as the list scrolls near its end, and only the rows on screen exist in the
// document (a 100,000-object folder is 100,000 small records and a few dozen elements), so scrolling keeps
// up however large the folder is. Sorting reorders what is loaded; the name filter asks the server for a
// longer prefix.

import { $, baseName, debounce, fill, formatBytes, formatCount, formatDate, h, icon, iconFor, spinner } from './dom.js';

const PAGE_SIZE = 1000;
/** Load the next page when the rows on screen come this close to the end of what is loaded: one page ahead,
 *  so someone scrolling steadily meets rows that are already there. */
const PREFETCH_ROWS = PAGE_SIZE;
/** Rows drawn beyond each edge of the viewport. */
const OVERSCAN = 8;

/** `#/b/{bucket}/o/{prefix}` with each segment encoded (slashes kept, so the address stays readable). */
export function folderRoute(bucket, prefix = '') {
  return `#/b/${encodeURIComponent(bucket)}/o/${prefix.split('/').map(encodeURIComponent).join('/')}`;
}

export class FileBrowser {
  constructor({ onOpenFile, onSelectionChange, describeIdentity, onUnauthenticated }) {
    this.onOpenFile = onOpenFile;
    this.onUnauthenticated = onUnauthenticated;
    this.onSelectionChange = onSelectionChange;
    this.describeIdentity = describeIdentity;
    this.api = null;
    this.viewport = $('#list-viewport');
    this.rows = $('#list-rows');
    this.statusLine = $('#list-status');
    this.notice = $('#list-notice');
    this.breadcrumb = $('#breadcrumb');
    this.filterInput = $('#filter');
    this.selectAll = $('#select-all');
    this.bucket = '';
    this.prefix = '';
    this.filter = '';
    this.sort = { key: 'name', direction: 1 };
    this.selected = new Set();
    this.currentName = '';
    /** Folders created in the console that hold no object yet, per `bucket\0parent prefix`. */
    this.pendingFolders = new Map();
    this.reset();

    this.scheduleRender = () => {
      if (this.frame) return;
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.render();
      });
    };
    this.viewport.addEventListener('scroll', this.scheduleRender, { passive: true });
    new ResizeObserver(() => {
      this.cachedRowHeight = 0; // the row height follows the layout (taller rows on narrow screens)
      this.scheduleRender();
    }).observe(this.viewport);
    this.rows.addEventListener('click', (event) => this.onClick(event));
    this.rows.addEventListener('change', (event) => this.onCheck(event));
    this.rows.addEventListener('keydown', (event) => this.onKey(event));
    this.viewport.addEventListener('focus', () => this.focusRow(this.active));
    this.selectAll.addEventListener('change', () => this.toggleAll(this.selectAll.checked));
    for (const button of document.querySelectorAll('[data-sort]')) {
      button.addEventListener('click', () => this.sortBy(button.dataset.sort));
    }
    const applyFilter = debounce(() => this.setFilter(this.filterInput.value), 300);
    this.filterInput.addEventListener('input', applyFilter);
    this.filterInput.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        applyFilter.cancel();
        this.setFilter(this.filterInput.value);
      } else if (event.key === 'Escape' && this.filterInput.value) {
        event.stopPropagation();
        this.filterInput.value = '';
        applyFilter.cancel();
        this.setFilter('');
      } else if (event.key === 'ArrowDown') {
        event.preventDefault();
        this.focusRow(0);
      }
    });
  }

  reset() {
    if (this.controller) this.controller.abort();
    this.controller = null;
    this.folders = [];
    this.files = [];
    this.view = [];
    this.nextPageToken = null;
    this.loadedOnce = false;
    this.loading = false;
    this.failure = null;
    this.active = 0;
    this.drawn = new Map();
    this.statusState = null;
    this.selected.clear();
    this.onSelectionChange(this.selected);
  }

  /** Shows `prefix` (ending in `/`, or '' for the root) of `bucket`. */
  open(api, bucket, prefix, filter = '') {
    this.api = api;
    const sameFolder = bucket === this.bucket && prefix === this.prefix;
    this.bucket = bucket;
    this.prefix = prefix;
    this.filter = filter;
    if (!sameFolder) this.viewport.scrollTop = 0;
    if (this.filterInput.value !== filter) this.filterInput.value = filter;
    this.reset();
    this.renderBreadcrumb();
    this.render();
    return this.loadPage();
  }

  reload() {
    return this.open(this.api, this.bucket, this.prefix, this.filter);
  }

  setFilter(text) {
    if (text === this.filter) return;
    this.open(this.api, this.bucket, this.prefix, text);
  }

  /** Stops the listing in flight (the list keeps what it has). */
  cancel() {
    if (this.controller) this.controller.abort();
  }

  async loadPage() {
    if (this.loading || (this.loadedOnce && !this.nextPageToken)) return;
    const controller = new AbortController();
    this.controller = controller;
    this.loading = true;
    this.failure = null;
    this.renderStatus();
    const query = { prefix: this.prefix + this.filter, pageToken: this.nextPageToken || undefined, maxResults: PAGE_SIZE };
    try {
      const page = await this.api.listObjects(this.bucket, { ...query, signal: controller.signal });
      if (this.controller !== controller) return;
      this.absorb(page);
    } catch (error) {
      if (this.controller !== controller) return;
      if (error.kind === 'unauthenticated') {
        this.onUnauthenticated(error);
        return;
      }
      if (error.kind !== 'aborted') this.failure = error;
    } finally {
      if (this.controller === controller) {
        this.loading = false;
        this.controller = null;
        this.render();
      }
    }
  }

  absorb(page) {
    const firstPage = !this.loadedOnce;
    this.loadedOnce = true;
    this.nextPageToken = page.nextPageToken || null;
    for (const prefix of page.prefixes || []) {
      this.folders.push({ kind: 'folder', name: prefix, label: this.label(prefix) });
    }
    for (const item of page.items || []) {
      // `dir/` placeholder objects name the folder itself: Firebase hides them, and so does the console.
      if (item.name === this.prefix) continue;
      this.files.push(this.fileEntry(item));
    }
    if (firstPage && !this.filter) this.addPendingFolders();
    this.rebuildView();
  }

  fileEntry(item) {
    return {
      kind: 'file',
      name: item.name,
      label: this.label(item.name),
      // A listing shows what the caller may read; an item without a size is one they may only see the name of.
      readable: item.size !== undefined,
      size: item.size === undefined ? undefined : Number(item.size),
      contentType: item.contentType || '',
      updated: item.updated || '',
    };
  }

  label(name) {
    const relative = name.slice(this.prefix.length);
    return relative.endsWith('/') ? relative.slice(0, -1) : relative;
  }

  addPendingFolders() {
    const pending = this.pendingFolders.get(`${this.bucket}\0${this.prefix}`);
    if (!pending) return;
    for (const prefix of pending) {
      if (!this.folders.some((f) => f.name === prefix)) {
        insertByName(this.folders, { kind: 'folder', name: prefix, label: this.label(prefix), pending: true });
      }
    }
  }

  /** Remembers a folder made in the console; it exists on the server once a file is uploaded into it. */
  addPendingFolder(prefix) {
    const key = `${this.bucket}\0${this.prefix}`;
    if (!this.pendingFolders.has(key)) this.pendingFolders.set(key, new Set());
    this.pendingFolders.get(key).add(prefix);
  }

  /** Shows a file that was just uploaded (when it belongs in what is on screen) without reloading the list. */
  showUploaded(bucket, meta) {
    if (bucket !== this.bucket || !meta.name.startsWith(this.prefix + this.filter)) return;
    const rest = meta.name.slice(this.prefix.length);
    const slash = rest.indexOf('/');
    if (slash >= 0) {
      const folder = this.prefix + rest.slice(0, slash + 1);
      if (!this.folders.some((f) => f.name === folder)) {
        insertByName(this.folders, { kind: 'folder', name: folder, label: this.label(folder) });
      }
    } else {
      const entry = this.fileEntry(meta);
      const index = this.files.findIndex((f) => f.name === meta.name);
      if (index >= 0) this.files[index] = entry;
      else insertByName(this.files, entry);
    }
    this.rebuildView();
    this.render();
  }

  removeFiles(names) {
    const gone = new Set(names);
    this.files = this.files.filter((f) => !gone.has(f.name));
    for (const name of names) this.selected.delete(name);
    this.onSelectionChange(this.selected);
    this.rebuildView();
    this.render();
  }

  updateFile(meta) {
    const index = this.files.findIndex((f) => f.name === meta.name);
    if (index < 0) return;
    this.files[index] = this.fileEntry(meta);
    this.rebuildView();
    this.render();
  }

  sortBy(key) {
    this.sort = this.sort.key === key ? { key, direction: -this.sort.direction } : { key, direction: 1 };
    for (const button of document.querySelectorAll('[data-sort]')) {
      const header = button.closest('[role="columnheader"]');
      const sorted = button.dataset.sort === this.sort.key;
      header.setAttribute('aria-sort', sorted ? (this.sort.direction > 0 ? 'ascending' : 'descending') : 'none');
    }
    this.rebuildView();
    this.render();
  }

  /** Folders first, then files, each in the chosen order (the server's byte order for names by default). */
  rebuildView() {
    const { key, direction } = this.sort;
    const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    const compare = {
      name: byName,
      size: (a, b) => (a.size ?? -1) - (b.size ?? -1) || byName(a, b),
      type: (a, b) => a.contentType.localeCompare(b.contentType) || byName(a, b),
      updated: (a, b) => (a.updated < b.updated ? -1 : a.updated > b.updated ? 1 : 0) || byName(a, b),
    }[key];
    // The server lists in byte order (folders and files interleaved), which is the default order already:
    // only another order sorts, so a page arriving costs its own length, not the folder's.
    const natural = key === 'name' && direction > 0;
    const folders = natural ? this.folders : [...this.folders].sort((a, b) => direction * byName(a, b));
    const files = natural ? this.files : [...this.files].sort((a, b) => direction * compare(a, b));
    this.view = folders.length ? folders.concat(files) : files;
    this.drawn = new Map();
    if (this.active >= this.view.length) this.active = Math.max(0, this.view.length - 1);
  }

  rowHeight() {
    if (!this.cachedRowHeight) {
      const value = parseFloat(getComputedStyle(this.viewport).getPropertyValue('--row-h'));
      this.cachedRowHeight = Number.isFinite(value) && value > 0 ? value : 44;
    }
    return this.cachedRowHeight;
  }

  /** Draws the rows in (and just around) the viewport, and fetches the next page when they near the end. */
  render() {
    const rowHeight = this.rowHeight();
    const total = this.view.length;
    const height = `${total * rowHeight}px`;
    if (this.rows.style.height !== height) {
      this.rows.style.height = height;
      this.rows.setAttribute('aria-rowcount', String(total));
    }
    const top = this.viewport.scrollTop;
    const visible = this.viewport.clientHeight || 600;
    const start = Math.max(0, Math.floor(top / rowHeight) - OVERSCAN);
    const end = Math.min(total, Math.ceil((top + visible) / rowHeight) + OVERSCAN);
    const hadFocus = this.rows.contains(document.activeElement);
    const keep = new Map();
    for (let index = start; index < end; index += 1) {
      let row = this.drawn.get(index);
      if (!row) {
        row = this.drawRow(this.view[index], index, rowHeight);
        this.rows.append(row);
      }
      this.decorate(row, this.view[index], index);
      keep.set(index, row);
    }
    for (const row of [...this.rows.children]) if (keep.get(Number(row.dataset.index)) !== row) row.remove();
    this.drawn = keep;
    if (hadFocus && !this.rows.contains(document.activeElement)) this.focusRow(this.active, false);
    this.renderStatus();
    if (end >= total - PREFETCH_ROWS && this.nextPageToken && !this.loading && !this.failure) this.loadPage();
  }

  drawRow(entry, index, rowHeight) {
    const folder = entry.kind === 'folder';
    const row = h('div', {
      class: `row ${entry.kind}`,
      role: 'row',
      tabindex: '-1',
      'aria-rowindex': String(index + 2),
      dataset: folder ? { testid: 'folder-row', prefix: entry.name, index: String(index) }
        : { testid: 'file-row', name: entry.name, index: String(index) },
    });
    row.style.transform = `translateY(${index * rowHeight}px)`;
    const check = folder ? h('span', { class: 'cell check', role: 'gridcell' })
      : h('span', { class: 'cell check', role: 'gridcell' },
        h('input', { type: 'checkbox', tabindex: '-1', 'aria-label': `Select ${entry.label}` }));
    const nameIcon = folder ? icon('folder', 'icon folder-icon')
      : entry.readable ? icon(iconFor(entry.contentType)) : icon('lock', 'icon lock-icon');
    const label = h('span', { class: 'label', title: entry.name }, entry.label || '(empty name)');
    const name = h('span', { class: 'cell name', role: 'gridcell' }, nameIcon, label,
      entry.pending ? h('span', { class: 'tag' }, 'new, empty') : null);
    let size;
    let type;
    let updated;
    if (folder) {
      size = h('span', { class: 'cell size muted', role: 'gridcell' }, '—');
      type = h('span', { class: 'cell type muted', role: 'gridcell' }, 'Folder');
      updated = h('span', { class: 'cell updated muted', role: 'gridcell' }, '');
    } else if (!entry.readable) {
      size = h('span', { class: 'cell size muted', role: 'gridcell' }, '—');
      type = h('span', { class: 'cell type muted', role: 'gridcell' }, 'No read access');
      updated = h('span', { class: 'cell updated muted', role: 'gridcell' }, '');
    } else {
      size = h('span', { class: 'cell size', role: 'gridcell' }, formatBytes(entry.size));
      type = h('span', { class: 'cell type', role: 'gridcell', title: entry.contentType }, entry.contentType || '—');
      updated = h('span', { class: 'cell updated', role: 'gridcell' }, formatDate(entry.updated));
    }
    row.append(check, name, size, type, updated);
    return row;
  }

  decorate(row, entry, index) {
    row.tabIndex = index === this.active ? 0 : -1;
    const isCurrent = entry.kind === 'file' && entry.name === this.currentName;
    row.classList.toggle('current', isCurrent);
    if (entry.kind === 'file') {
      const selected = this.selected.has(entry.name);
      row.setAttribute('aria-selected', String(selected));
      const box = row.querySelector('input[type=checkbox]');
      if (box && box.checked !== selected) box.checked = selected;
    }
  }

  /** The notice and the status line; redrawn only when what they say changes (not on every scroll). */
  renderStatus() {
    const files = this.files.length;
    const folders = this.folders.length;
    const state = [files, folders, this.loading, this.loadedOnce, Boolean(this.nextPageToken), this.failure,
      this.filter, this.bucket, this.prefix];
    if (this.statusState && state.every((value, index) => value === this.statusState[index])) return;
    this.statusState = state;
    const where = `${this.bucket}/${this.prefix}`;
    fill(this.notice);
    this.notice.hidden = true;
    if (this.failure) {
      this.notice.hidden = false;
      if (this.failure.isDenial) {
        this.notice.className = 'notice denied';
        this.notice.dataset.testid = 'list-denied';
        fill(this.notice, icon('lock', 'icon big'),
          h('div', {},
            h('strong', {}, 'You do not have permission to see what is in this folder.'),
            h('p', {}, `The rules deny listing ${where} for ${this.describeIdentity()}.`,
              this.prefix ? ' ' : '', this.prefix ? h('a', { href: folderRoute(this.bucket, parentOf(this.prefix)) }, 'Go up a level') : null)));
      } else {
        this.notice.className = 'notice error';
        this.notice.dataset.testid = 'list-error';
        const retry = h('button', { type: 'button' }, icon('retry'), 'Try again');
        retry.addEventListener('click', () => {
          this.failure = null;
          this.loadPage();
        });
        fill(this.notice, icon('close', 'icon big'),
          h('div', {}, h('strong', {}, `Could not list ${where}. `), this.failure.message,
            this.failure.detail ? h('p', { class: 'muted' }, `The gateway said: ${this.failure.detail}`) : null),
          retry);
      }
    } else if (this.loadedOnce && !this.loading && this.view.length === 0) {
      this.notice.hidden = false;
      this.notice.className = 'notice empty';
      this.notice.dataset.testid = 'list-empty';
      fill(this.notice, icon('folder', 'icon big'),
        h('div', {}, h('strong', {}, this.filter ? `No names here start with “${this.filter}”.` : 'This folder is empty.'),
          h('p', {}, this.filter ? 'Change or clear the filter.' : 'Drop files here, or use Upload.')));
    }

    const parts = [];
    if (folders) parts.push(`${formatCount(folders)} folder${folders === 1 ? '' : 's'}`);
    parts.push(`${formatCount(files)} file${files === 1 ? '' : 's'}`);
    let summary = parts.join(', ');
    if (this.nextPageToken) summary += ' loaded, more below';
    if (this.loading) {
      const cancel = h('button', { type: 'button', class: 'link' }, 'Cancel');
      cancel.addEventListener('click', () => this.cancel());
      fill(this.statusLine, spinner('Loading the folder'), ` Loading${this.loadedOnce ? ' more' : ''}… `, cancel);
      this.statusLine.dataset.state = 'loading';
    } else if (this.loadedOnce) {
      const more = this.nextPageToken && !this.failure ? h('button', { type: 'button', class: 'link' }, 'Load more') : null;
      if (more) more.addEventListener('click', () => this.loadPage());
      fill(this.statusLine, summary, more ? ' · ' : '', more);
      this.statusLine.dataset.state = this.nextPageToken ? 'more' : 'complete';
    } else {
      fill(this.statusLine, '');
      this.statusLine.dataset.state = 'idle';
    }
    this.statusLine.dataset.count = String(this.view.length);
  }

  renderBreadcrumb() {
    const crumbs = [];
    crumbs.push({ label: this.bucket, prefix: '' });
    let prefix = '';
    for (const segment of this.prefix.split('/').slice(0, -1)) {
      prefix += `${segment}/`;
      crumbs.push({ label: segment || '(empty)', prefix });
    }
    const list = h('ol', {});
    crumbs.forEach((crumb, index) => {
      const last = index === crumbs.length - 1;
      const link = h('a', { href: folderRoute(this.bucket, crumb.prefix), 'aria-current': last ? 'page' : null,
        dataset: { prefix: crumb.prefix } }, crumb.label);
      list.append(h('li', {}, link));
    });
    fill(this.breadcrumb, list);
  }

  entryAt(index) {
    return this.view[index];
  }

  onClick(event) {
    const row = event.target.closest('.row');
    if (!row || event.target.matches('input[type=checkbox]')) return;
    if (event.target.closest('.check')) {
      const box = row.querySelector('input[type=checkbox]');
      if (box) {
        box.checked = !box.checked;
        this.onCheck({ target: box });
      }
      return;
    }
    const index = Number(row.dataset.index);
    this.active = index;
    this.activate(index);
  }

  activate(index) {
    const entry = this.view[index];
    if (!entry) return;
    if (entry.kind === 'folder') {
      window.location.hash = folderRoute(this.bucket, entry.name);
    } else {
      this.setCurrent(entry.name);
      this.onOpenFile(entry);
    }
  }

  setCurrent(name) {
    this.currentName = name;
    for (const [index, row] of this.drawn) this.decorate(row, this.view[index], index);
  }

  onCheck(event) {
    const row = event.target.closest('.row');
    if (!row) return;
    const entry = this.view[Number(row.dataset.index)];
    if (!entry || entry.kind !== 'file') return;
    if (event.target.checked) this.selected.add(entry.name);
    else this.selected.delete(entry.name);
    row.setAttribute('aria-selected', String(event.target.checked));
    this.onSelectionChange(this.selected);
  }

  toggleAll(on) {
    this.selected.clear();
    if (on) for (const file of this.files) this.selected.add(file.name);
    for (const [index, row] of this.drawn) this.decorate(row, this.view[index], index);
    this.onSelectionChange(this.selected);
  }

  focusRow(index, scroll = true) {
    if (!this.view.length) return;
    this.active = Math.max(0, Math.min(this.view.length - 1, index));
    if (scroll) {
      const rowHeight = this.rowHeight();
      const top = this.active * rowHeight;
      // The part of the list the upload tray does not cover.
      const room = parseFloat(getComputedStyle(document.body).getPropertyValue('--uploads-room')) || 0;
      const shown = Math.max(rowHeight, this.viewport.clientHeight - room);
      if (top < this.viewport.scrollTop) this.viewport.scrollTop = top;
      else if (top + rowHeight > this.viewport.scrollTop + shown) {
        this.viewport.scrollTop = top + rowHeight - shown;
      }
    }
    this.render();
    const row = this.drawn.get(this.active);
    if (row) row.focus({ preventScroll: true });
  }

  onKey(event) {
    const page = Math.max(1, Math.floor(this.viewport.clientHeight / this.rowHeight()) - 1);
    const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
    if (event.key in moves) {
      event.preventDefault();
      this.focusRow(this.active + moves[event.key]);
    } else if (event.key === 'Home') {
      event.preventDefault();
      this.focusRow(0);
    } else if (event.key === 'End') {
      event.preventDefault();
      this.focusRow(this.view.length - 1);
    } else if (event.key === 'Enter') {
      event.preventDefault();
      this.activate(this.active);
    } else if (event.key === ' ') {
      event.preventDefault();
      const box = this.drawn.get(this.active)?.querySelector('input[type=checkbox]');
      if (box) {
        box.checked = !box.checked;
        this.onCheck({ target: box });
      }
    } else if (event.key === 'Backspace' || (event.key === 'ArrowLeft' && event.altKey)) {
      if (this.prefix) {
        event.preventDefault();
        window.location.hash = folderRoute(this.bucket, parentOf(this.prefix));
      }
    }
  }
}

/** Inserts `entry` into `list` (sorted by name) where it belongs. */
function insertByName(list, entry) {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (list[middle].name < entry.name) low = middle + 1;
    else high = middle;
  }
  list.splice(low, 0, entry);
}

/** "a/b/" → "a/", "a/" → "". */
export function parentOf(prefix) {
  const trimmed = prefix.slice(0, -1);
  const slash = trimmed.lastIndexOf('/');
  return slash < 0 ? '' : trimmed.slice(0, slash + 1);
}

export { baseName };
