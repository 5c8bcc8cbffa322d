'use strict';

// How the code is written: promises and async/await inside, no callback-style fs, no callback pyramid.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');

const read = (name) => fs.readFileSync(path.join(__dirname, '..', name), 'utf8');

test('source: lib/store.js uses node:fs/promises, not the callback fs module', () => {
  const source = read('lib/store.js');
  assert.ok(/require\(\s*['"]node:fs\/promises['"]\s*\)/.test(source), "lib/store.js does not require('node:fs/promises')");
  assert.ok(!/require\(\s*['"](node:)?fs['"]\s*\)/.test(source), "lib/store.js still requires the callback 'fs' module");
});

test('source: lib/store.js is written with async functions', () => {
  const source = read('lib/store.js');
  assert.ok(/\basync\b/.test(source) && /\bawait\b/.test(source), 'lib/store.js has no async/await');
});

test('source: bin/kv.js uses the promise API with await, not callbacks', () => {
  const source = read('bin/kv.js');
  assert.ok(/\bawait\s+open\(/.test(source), 'bin/kv.js does not `await open(...)`');
  assert.ok(!/\(\s*\w*[eE]rr\w*\s*,/.test(source), 'bin/kv.js still has an (err, ...) callback');
});
