'use strict';

// The kv command line: the same output and exit codes before and after.

const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const KV = path.join(__dirname, '..', 'bin', 'kv.js');
const kv = (...args) => spawnSync(process.execPath, [KV, ...args], { encoding: 'utf8' });

test('cli: set, get, keys and delete', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kv-')), 'store.json');
  assert.strictEqual(kv(file, 'set', 'b', '[1, 2]').status, 0);
  assert.strictEqual(kv(file, 'set', 'a', '"x"').status, 0);
  assert.strictEqual(kv(file, 'get', 'b').stdout, '[1,2]\n');
  assert.strictEqual(kv(file, 'keys').stdout, 'a\nb\n');
  assert.strictEqual(kv(file, 'delete', 'a').status, 0);
  assert.strictEqual(kv(file, 'keys').stdout, 'b\n');
});

test('cli: errors go to stderr with exit code 1', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kv-')), 'store.json');
  const missing = kv(file, 'get', 'nope');
  assert.deepStrictEqual([missing.status, missing.stdout, missing.stderr], [1, '', 'kv: no such key: nope\n']);
  const notJson = kv(file, 'set', 'a', '{bad');
  assert.deepStrictEqual([notJson.status, notJson.stderr], [1, 'kv: value is not JSON: {bad\n']);
  const usage = kv(file, 'frobnicate');
  assert.strictEqual(usage.status, 1);
  assert.match(usage.stderr, /^kv: usage: kv FILE get KEY/);
});
