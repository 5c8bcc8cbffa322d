'use strict';

// The promise API: every function and method returns a promise when called without a callback.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { open, KeyNotFoundError } = require('..');

const tmpFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kv-')), 'store.json');

test('promise: open resolves to a store, a missing file to an empty one', { timeout: 5000 }, async () => {
  const store = await open(tmpFile());
  assert.deepStrictEqual(await store.keys(), []);
});

test('promise: set resolves once the value is on disk, and get reads it back', { timeout: 5000 }, async () => {
  const file = tmpFile();
  const store = await open(file);
  assert.strictEqual(await store.set('answer', { value: 42 }), undefined);
  assert.deepStrictEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { answer: { value: 42 } });
  assert.deepStrictEqual(await store.get('answer'), { value: 42 });
  assert.deepStrictEqual(await store.keys(), ['answer']);
});

test('promise: get of a missing key rejects with KeyNotFoundError', { timeout: 5000 }, async () => {
  const store = await open(tmpFile());
  await assert.rejects(store.get('nope'), (err) => err instanceof KeyNotFoundError && err.key === 'nope');
});

test('promise: delete removes a key, and rejects for a missing one', { timeout: 5000 }, async () => {
  const file = tmpFile();
  fs.writeFileSync(file, '{"a": 1, "b": 2}');
  const store = await open(file);
  await store.delete('a');
  assert.deepStrictEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { b: 2 });
  await assert.rejects(store.delete('a'), KeyNotFoundError);
  assert.deepStrictEqual(await store.keys(), ['b']);
});

test('promise: concurrent changes are written in call order', { timeout: 5000 }, async () => {
  const file = tmpFile();
  const store = await open(file);
  const order = [];
  await Promise.all(Array.from({ length: 30 }, (_, i) => store.set('counter', i).then(() => order.push(i))));
  assert.deepStrictEqual(order, Array.from({ length: 30 }, (_, i) => i));
  assert.deepStrictEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { counter: 29 });
  assert.strictEqual(await store.get('counter'), 29);
});

test('promise: a failed write rejects, and later changes still run', { timeout: 5000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kv-'));
  const file = path.join(dir, 'sub', 'store.json');
  const store = await open(file);
  await assert.rejects(store.set('a', 1), { code: 'ENOENT' });
  fs.mkdirSync(path.join(dir, 'sub'));
  await store.set('b', 2);
  assert.strictEqual(JSON.parse(fs.readFileSync(file, 'utf8')).b, 2);
});

test('promise: open rejects invalid JSON with the file name', { timeout: 5000 }, async () => {
  const file = tmpFile();
  fs.writeFileSync(file, '{oops');
  await assert.rejects(open(file), /store\.json: not valid JSON: /);
});
