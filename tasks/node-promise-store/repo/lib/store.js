'use strict';

const fs = require('node:fs');

class KeyNotFoundError extends Error {
  constructor(key) {
    super(`no such key: ${key}`);
    this.name = 'KeyNotFoundError';
    this.key = key;
  }
}

/**
 * A key-value store kept in one JSON file (an object). Reads are served from memory; every change is
 * written to disk (to a temporary file, then renamed over the store) before its callback runs. Changes
 * are applied and written one after the other, in the order they were requested.
 */
class Store {
  constructor(file, data) {
    this.file = file;
    this._data = data;
    this._queue = [];
    this._writing = false;
  }

  get(key, callback) {
    process.nextTick(() => {
      if (!Object.hasOwn(this._data, key)) {
        callback(new KeyNotFoundError(key));
        return;
      }
      callback(null, this._data[key]);
    });
  }

  keys(callback) {
    process.nextTick(() => callback(null, Object.keys(this._data).sort()));
  }

  set(key, value, callback) {
    this._change((data) => {
      data[key] = value;
    }, callback);
  }

  delete(key, callback) {
    this._change((data) => {
      if (!Object.hasOwn(data, key)) {
        throw new KeyNotFoundError(key);
      }
      delete data[key];
    }, callback);
  }

  _change(mutate, callback) {
    this._queue.push({ mutate, callback });
    if (!this._writing) {
      this._next();
    }
  }

  _next() {
    const job = this._queue.shift();
    if (!job) {
      this._writing = false;
      return;
    }
    this._writing = true;
    try {
      job.mutate(this._data);
    } catch (err) {
      job.callback(err);
      this._next();
      return;
    }
    const tmp = `${this.file}.tmp`;
    fs.writeFile(tmp, `${JSON.stringify(this._data, null, 2)}\n`, (err) => {
      if (err) {
        job.callback(err);
        this._next();
        return;
      }
      fs.rename(tmp, this.file, (renameErr) => {
        job.callback(renameErr || null);
        this._next();
      });
    });
  }
}

/** Open the store in `file`; a missing file is an empty store. */
function open(file, callback) {
  fs.readFile(file, 'utf8', (err, text) => {
    if (err && err.code === 'ENOENT') {
      callback(null, new Store(file, {}));
      return;
    }
    if (err) {
      callback(err);
      return;
    }
    let data;
    try {
      data = JSON.parse(text);
    } catch (parseErr) {
      callback(new Error(`${file}: not valid JSON: ${parseErr.message}`));
      return;
    }
    callback(null, new Store(file, data));
  });
}

module.exports = { open, Store, KeyNotFoundError };
