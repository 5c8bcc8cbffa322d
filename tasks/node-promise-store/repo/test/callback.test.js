'use strict';

// The callback API that existing callers use: it must keep working.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { open, KeyNotFoundError } = require('..');

const tmpFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kv-')), 'store.json');

function openStore(file) {
  return new Promise((resolve, reject) => {
    open(file, (err, store) => (err ? reject(err) : resolve(store)));
  });
}

test('callback: a missing file opens as an empty store', (t, done) => {
  open(tmpFile(), (err, store) => {
    assert.ifError(err);
    store.keys((keysErr, keys) => {
      assert.ifError(keysErr);
      assert.deepStrictEqual(keys, []);
      done();
    });
  });
});

test('callback: set is on disk when its callback runs, and get reads it back', (t, done) => {
  const file = tmpFile();
  open(file, (err, store) => {
    assert.ifError(err);
    store.set('answer', { value: 42 }, (setErr) => {
      assert.ifError(setErr);
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { answer: { value: 42 } });
      store.get('answer', (getErr, value) => {
        assert.ifError(getErr);
        assert.deepStrictEqual(value, { value: 42 });
        done();
      });
    });
  });
});

test('callback: get of a missing key fails with KeyNotFoundError', (t, done) => {
  open(tmpFile(), (err, store) => {
    assert.ifError(err);
    store.get('nope', (getErr) => {
      assert.ok(getErr instanceof KeyNotFoundError);
      assert.strictEqual(getErr.message, 'no such key: nope');
      assert.strictEqual(getErr.key, 'nope');
      done();
    });
  });
});

test('callback: delete removes a key, and fails for a missing one', (t, done) => {
  const file = tmpFile();
  fs.writeFileSync(file, '{"a": 1, "b": 2}');
  open(file, (err, store) => {
    assert.ifError(err);
    store.delete('a', (deleteErr) => {
      assert.ifError(deleteErr);
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { b: 2 });
      store.delete('a', (againErr) => {
        assert.ok(againErr instanceof KeyNotFoundError);
        done();
      });
    });
  });
});

test('callback: concurrent changes are written in call order', async () => {
  const file = tmpFile();
  const store = await openStore(file);
  const order = [];
  await Promise.all(
    Array.from({ length: 30 }, (_, i) => new Promise((resolve, reject) => {
      store.set('counter', i, (err) => {
        order.push(i);
        return err ? reject(err) : resolve();
      });
    })),
  );
  assert.deepStrictEqual(order, Array.from({ length: 30 }, (_, i) => i));
  assert.deepStrictEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { counter: 29 });
});

test('callback: invalid JSON is reported with the file name', (t, done) => {
  const file = tmpFile();
  fs.writeFileSync(file, '{oops');
  open(file, (err) => {
    assert.match(err.message, /store\.json: not valid JSON: /);
    done();
  });
});
