// The rules playground: a hypothetical request (method, path, optional token claims and object fields) sent to
// the admin-only explain endpoint, which judges it with the rules the server is running and says which
// `match` and condition decided.

import { $, fill, h, icon, spinner } from './dom.js';

export class Playground {
  constructor() {
    this.form = $('#playground-form');
    this.result = $('#playground-result');
    this.method = $('#playground-method');
    this.bucket = $('#playground-bucket');
    this.path = $('#playground-path');
    this.auth = $('#playground-auth');
    this.resource = $('#playground-resource');
    this.requestResource = $('#playground-request-resource');
    this.run = $('#playground-run');
    this.cancelButton = $('#playground-cancel');
    this.controller = null;
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.explain();
    });
    this.cancelButton.addEventListener('click', () => this.controller?.abort());
    this.method.addEventListener('change', () => this.describeMethod());
    this.describeMethod();
  }

  /** Called when the view opens: fills the bucket (and path) from what the file browser shows. */
  prepare(api, admin, bucket, path) {
    this.api = api;
    if (bucket && !this.bucket.value) this.bucket.value = bucket;
    if (path && !this.path.value) this.path.value = path;
    $('#playground-admin-note').hidden = admin;
  }

  describeMethod() {
    const method = this.method.value;
    const hints = {
      get: 'Reading one file: its metadata or bytes. Path is the object name.',
      list: 'Listing a folder. Path is the folder without its trailing slash ("" for the bucket root).',
      create: 'Uploading a new file. Describe it in request.resource.',
      update: 'Replacing a file or changing its metadata. resource is the stored file, request.resource the new one.',
      delete: 'Deleting a file. resource is the stored file.',
    };
    $('#playground-method-hint').textContent = hints[method] || '';
  }

  /** Parses an optional JSON text area: undefined when empty, else the value (or throws a plain message). */
  static optionalJSON(textarea, label) {
    const text = textarea.value.trim();
    if (!text) return undefined;
    try {
      const value = JSON.parse(text);
      if (value !== null && (typeof value !== 'object' || Array.isArray(value))) throw new Error('not an object');
      return value;
    } catch (error) {
      textarea.focus();
      throw new Error(`${label} must be a JSON object (or empty): ${error.message}`);
    }
  }

  async explain() {
    if (this.controller) this.controller.abort();
    const request = { method: this.method.value, bucket: this.bucket.value.trim(), path: this.path.value.replace(/^\/+/, '') };
    try {
      if (!request.bucket) throw new Error('Enter the bucket the request is for.');
      const auth = Playground.optionalJSON(this.auth, 'Auth claims');
      request.auth = auth === undefined ? null : auth;
      const resource = Playground.optionalJSON(this.resource, 'resource');
      if (resource !== undefined) request.resource = resource;
      const requestResource = Playground.optionalJSON(this.requestResource, 'request.resource');
      if (requestResource !== undefined) request.requestResource = requestResource;
    } catch (error) {
      this.show('invalid', h('p', {}, error.message));
      return;
    }
    const controller = new AbortController();
    this.controller = controller;
    this.run.disabled = true;
    this.cancelButton.hidden = false;
    fill(this.result, spinner('Asking the server'), ' Asking the server…');
    this.result.className = 'result pending';
    try {
      const decision = await this.api.explain(request, controller.signal);
      const allowed = decision.decision === 'allow';
      const who = request.auth ? `the user ${request.auth.sub || request.auth.user_id || request.auth.uid || '(no uid)'}` : 'an anonymous caller';
      this.show(allowed ? 'allow' : 'deny',
        h('p', { class: 'verdict-line' }, `${request.method} of /b/${request.bucket}/o/${request.path} by ${who}`),
        h('pre', { class: 'explanation' }, decision.explanation || ''));
    } catch (error) {
      if (error.kind === 'aborted') {
        this.show('invalid', h('p', {}, 'Cancelled.'));
      } else if (error.isDenial) {
        this.show('refused', h('p', {}, 'Only the admin key may ask the server to explain its rules. Sign in with it to use the playground.'));
      } else {
        this.show('invalid', h('p', {}, error.message), error.detail ? h('p', { class: 'muted' }, `The gateway said: ${error.detail}`) : null);
      }
    } finally {
      if (this.controller === controller) {
        this.controller = null;
        this.run.disabled = false;
        this.cancelButton.hidden = true;
      }
    }
  }

  /** Writes the result box; its text starts with the verdict word (allow / deny) for a decision. */
  show(kind, ...details) {
    const words = { allow: 'allow', deny: 'deny', refused: 'not available', invalid: 'cannot ask' };
    const icons = { allow: 'shield', deny: 'lock', refused: 'lock', invalid: 'close' };
    this.result.className = `result ${kind}`;
    this.result.dataset.verdict = kind;
    fill(this.result, h('div', { class: 'verdict' }, h('span', { class: 'verdict-word' }, words[kind]), icon(icons[kind])),
      ...details);
  }
}
