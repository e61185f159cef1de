// Modal questions (a native <dialog>: focus stays inside, Escape cancels) and passing notices (toasts).

import { $, fill, h, icon } from './dom.js';

/** Asks a yes/no question. Resolves true when the person confirms. `danger` styles the confirm button. */
export function confirmDialog({ title, message, confirmLabel = 'OK', danger = false, testid = 'confirm-ok' }) {
  const dialog = $('#modal');
  const confirm = h('button', { type: 'submit', value: 'confirm', class: danger ? 'danger' : 'primary', dataset: { testid } },
    confirmLabel);
  const cancel = h('button', { type: 'submit', value: 'cancel', formnovalidate: true }, 'Cancel');
  fill(dialog, h('form', { method: 'dialog', class: 'modal-body' },
    h('h2', { id: 'modal-title' }, title),
    typeof message === 'string' ? h('p', {}, message) : message,
    h('div', { class: 'modal-actions' }, cancel, confirm)));
  return show(dialog, cancel).then((value) => value === 'confirm');
}

/**
 * Asks for a line of text. `validate(text)` returns an error message or '' (checked before closing).
 * Resolves the text, or null when cancelled.
 */
export function promptDialog({ title, label, value = '', placeholder = '', confirmLabel = 'OK', validate = () => '' }) {
  const dialog = $('#modal');
  const input = h('input', { type: 'text', id: 'modal-input', value, placeholder, autocomplete: 'off', spellcheck: 'false',
    dataset: { testid: 'prompt-input' } });
  const error = h('p', { class: 'form-error', role: 'alert' });
  const cancel = h('button', { type: 'button' }, 'Cancel');
  const form = h('form', { class: 'modal-body' },
    h('h2', { id: 'modal-title' }, title),
    h('label', { for: 'modal-input' }, label), input, error,
    h('div', { class: 'modal-actions' }, cancel,
      h('button', { type: 'submit', class: 'primary', dataset: { testid: 'prompt-ok' } }, confirmLabel)));
  fill(dialog, form);
  cancel.addEventListener('click', () => dialog.close('cancel'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const problem = validate(input.value.trim());
    if (problem) {
      error.textContent = problem;
      input.focus();
      return;
    }
    dialog.close('ok');
  });
  return show(dialog, input).then((result) => (result === 'ok' ? input.value.trim() : null));
}

function show(dialog, focus) {
  dialog.returnValue = '';
  dialog.setAttribute('aria-labelledby', 'modal-title');
  const opener = document.activeElement;
  dialog.showModal();
  focus.focus();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
      resolve(dialog.returnValue);
    }, { once: true });
  });
}

/** A short notice in the corner. `kind`: info | success | denied | error. */
export function toast(message, kind = 'info', timeout = 5000) {
  const list = $('#toasts');
  const names = { success: 'shield', denied: 'lock', error: 'close', info: 'shield' };
  const close = h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Dismiss' }, icon('close'));
  const item = h('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status' },
    icon(names[kind] || 'shield'), h('span', {}, message), close);
  close.addEventListener('click', () => item.remove());
  list.append(item);
  if (timeout) setTimeout(() => item.remove(), timeout);
  return item;
}
