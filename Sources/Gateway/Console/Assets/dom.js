// Small DOM and formatting helpers shared by the console's modules. No framework: elements are built with h()
// and text is always set as text (never parsed as HTML), so object names cannot inject markup.

/** h('div', {class: 'x', dataset: {testid: 'y'}, onclick: fn}, child, 'text', ...) → the element. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') element.className = value;
    else if (key === 'dataset') Object.assign(element.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') element.addEventListener(key.slice(2), value);
    else if (key === 'text') element.textContent = value;
    else if (value === true) element.setAttribute(key, '');
    else element.setAttribute(key, String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

const ICONS = {
  folder: 'M3 6.5A1.5 1.5 0 0 1 4.5 5h4.1l1.8 2h9.1A1.5 1.5 0 0 1 21 8.5v9a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 17.5z',
  file: 'M6 3h8l5 5v12a1 1 0 0 1-1 1H6a1 1 0 0 1-1-1V4a1 1 0 0 1 1-1zm8 0v5h5',
  image: 'M4 5h16v14H4zM4 16l4.5-4.5 3.5 3.5 2.5-2.5L20 18M15.5 9.5a1.5 1.5 0 1 0 0-.01',
  text: 'M6 3h8l5 5v12a1 1 0 0 1-1 1H6a1 1 0 0 1-1-1V4a1 1 0 0 1 1-1zm8 0v5h5M8 12h8M8 15.5h8M8 19h5',
  lock: 'M7 11V8a5 5 0 0 1 10 0v3M5.5 11h13v9.5h-13z',
  upload: 'M12 16V4m0 0L7.5 8.5M12 4l4.5 4.5M4 15v4.5h16V15',
  download: 'M12 4v12m0 0l-4.5-4.5M12 16l4.5-4.5M4 15v4.5h16V15',
  link: 'M10 14a4.5 4.5 0 0 0 6.4 0l3-3a4.5 4.5 0 0 0-6.4-6.4l-1.2 1.2M14 10a4.5 4.5 0 0 0-6.4 0l-3 3a4.5 4.5 0 0 0 6.4 6.4l1.2-1.2',
  clock: 'M12 3.5a8.5 8.5 0 1 0 0 17 8.5 8.5 0 0 0 0-17zM12 7.5V12l3 2',
  trash: 'M4 7h16M9.5 7V4.5h5V7M6.5 7l1 13h9l1-13M10 11v5.5M14 11v5.5',
  close: 'M6 6l12 12M18 6L6 18',
  refresh: 'M19.5 12a7.5 7.5 0 1 1-2.2-5.3M19.5 4v4.5H15',
  folderPlus: 'M3 6.5A1.5 1.5 0 0 1 4.5 5h4.1l1.8 2h9.1A1.5 1.5 0 0 1 21 8.5v9a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 17.5zM12 10v6m-3-3h6',
  pause: 'M8.5 5v14M15.5 5v14',
  play: 'M7 4.5v15l12-7.5z',
  retry: 'M4.5 12a7.5 7.5 0 1 0 2.2-5.3M4.5 4v4.5H9',
  chevron: 'M9 5l7 7-7 7',
  up: 'M12 19V5m0 0l-6 6m6-6l6 6',
  shield: 'M12 3l7.5 3v5.5c0 4.5-3.2 8.2-7.5 9.5-4.3-1.3-7.5-5-7.5-9.5V6z',
  signout: 'M14 4h5.5v16H14M10 8l-4 4 4 4M6 12h10',
};

/** An inline SVG icon (decorative: hidden from assistive technology). */
export function icon(name, className = 'icon') {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('class', className);
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', ICONS[name] || ICONS.file);
  svg.append(path);
  return svg;
}

/** 1536 → "1.5 KiB". */
export function formatBytes(value) {
  const n = Number(value);
  if (!Number.isFinite(n)) return '—';
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let size = n / 1024;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return `${size < 10 ? size.toFixed(1) : Math.round(size)} ${units[unit]}`;
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const fullDateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'long', timeStyle: 'long' });

/** An RFC 3339 time as local text ("—" when absent). */
export function formatDate(text, full = false) {
  if (!text) return '—';
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return text;
  return (full ? fullDateFormat : dateFormat).format(date);
}

export const formatCount = (n) => new Intl.NumberFormat().format(n);

/** The last segment of an object name or prefix ("a/b/c.txt" → "c.txt", "a/b/" → "b"). */
export function baseName(name) {
  const trimmed = name.endsWith('/') ? name.slice(0, -1) : name;
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

/** The icon that suits a content type. */
export function iconFor(contentType) {
  if (!contentType) return 'file';
  if (contentType.startsWith('image/')) return 'image';
  if (contentType.startsWith('text/') || /json|xml|javascript/.test(contentType)) return 'text';
  return 'file';
}

/** Calls fn at most once per `wait` ms after the last call. */
export function debounce(fn, wait) {
  let timer = 0;
  const debounced = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), wait);
  };
  debounced.cancel = () => clearTimeout(timer);
  return debounced;
}

/** A spinner with a label for screen readers. */
export function spinner(label = 'Loading') {
  return h('span', { class: 'spinner', role: 'status', 'aria-label': label });
}

/** True when a keyboard event comes from a text field (global shortcuts leave those alone). */
export function isTyping(event) {
  const target = event.target;
  return target instanceof HTMLElement
    && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
}

/** Copies text to the clipboard; resolves false where the browser refuses (non-secure origins). */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}
