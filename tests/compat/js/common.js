'use strict';
// Shared helpers for the JavaScript clients: independent checksums, a step runner, and the
// protocol classifier that turns a captured request into evidence.

const crypto = require('crypto');

const md5Hex = (data) => crypto.createHash('md5').update(data).digest('hex');

// MD5OfMessageAttributes: names sorted, each of name, data type and value written as a 4-byte
// big-endian length plus bytes, with a transport byte (1 string, 2 binary) before the value.
function md5OfAttributes(attrs) {
  const parts = [];
  const field = (buf) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(buf.length);
    parts.push(len, buf);
  };
  for (const name of Object.keys(attrs).sort()) {
    const v = attrs[name];
    field(Buffer.from(name, 'utf8'));
    field(Buffer.from(v.DataType, 'utf8'));
    if (v.BinaryValue !== undefined) {
      parts.push(Buffer.from([2]));
      field(Buffer.from(v.BinaryValue));
    } else {
      parts.push(Buffer.from([1]));
      field(Buffer.from(v.StringValue, 'utf8'));
    }
  }
  return md5Hex(Buffer.concat(parts));
}

// Reference vectors (protocol reference, section 6.4).
if (md5OfAttributes({ Foo: { DataType: 'String', StringValue: 'Bar' } }) !== 'ae7155c6026991b6d54b11589678bf9c'
  || md5OfAttributes({ timestamp: { DataType: 'Number.java.lang.Long', StringValue: '1493147359900' } }) !== '2e2e4876d8e0bd6b8c2c8f556831c349'
  || md5OfAttributes({ b: { DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 2]) } }) !== '0911ac989fa4a4b3440f074ba9941547') {
  throw new Error('md5OfAttributes does not match the reference vectors');
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function assert(cond, ...what) {
  if (!cond) {
    const detail = what.map((w) => (typeof w === 'string' ? w : safeJson(w))).join(' ');
    throw new Error('assertion failed' + (detail ? ': ' + detail : ''));
  }
}

// JSON with object keys sorted (so comparisons ignore key order) and bytes shown as hex.
function safeJson(v) {
  try {
    return JSON.stringify(v, (k, x) => {
      if (x instanceof Uint8Array) return Buffer.from(x.buffer, x.byteOffset, x.byteLength).toString('hex');
      if (x && typeof x === 'object' && !Array.isArray(x)) {
        return Object.fromEntries(Object.keys(x).sort().map((key) => [key, x[key]]));
      }
      if (typeof x === 'bigint') return x.toString();
      return x;
    });
  } catch (e) {
    return String(v);
  }
}

function assertEq(actual, expected, what) {
  const a = safeJson(actual);
  const e = safeJson(expected);
  if (a !== e) throw new Error(`${what || 'value'}: expected ${e}, got ${a}`);
}

// Records every outgoing request as {method, url, headers (lower-cased), body}.
class Recorder {
  constructor() {
    this.requests = [];
  }

  record(method, url, headers, body) {
    const h = {};
    for (const [k, v] of Object.entries(headers || {})) h[k.toLowerCase()] = String(v);
    let b = body;
    if (b === undefined || b === null) b = '';
    // (JS v3 bodies are Uint8Array subclasses that warn when used as strings: read the bytes.)
    if (b instanceof Uint8Array) b = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
    if (typeof b !== 'string') b = '<stream>';
    this.requests.push({ method, url, headers: h, body: b });
  }

  static operation(r) {
    const target = r.headers['x-amz-target'] || '';
    if (target.startsWith('AmazonSQS.')) return target.slice('AmazonSQS.'.length);
    const m = /(?:^|&)Action=([A-Za-z]+)/.exec(r.body) || /[?&]Action=([A-Za-z]+)/.exec(r.url);
    return m ? m[1] : '?';
  }

  static classify(r) {
    if ((r.headers['x-amz-target'] || '').startsWith('AmazonSQS.')) return 'json';
    if (r.body.startsWith('Action=') || r.body.includes('&Action=') || /[?&]Action=/.test(r.url)) return 'query';
    return 'unknown';
  }

  evidence(i = 0) {
    const r = this.requests[i];
    const kind = Recorder.classify(r);
    const detail = kind === 'json'
      ? `X-Amz-Target: ${r.headers['x-amz-target']}; Content-Type: ${r.headers['content-type']}; body=${r.body.slice(0, 80)}`
      : `Content-Type: ${r.headers['content-type']}; body=${r.body.slice(0, 80)}`;
    return `${r.method} ${r.url} -> ${kind.toUpperCase()} (${detail})`;
  }

  // Fails unless every captured request used `protocol`; prints the evidence line.
  check(name, protocol) {
    assert(this.requests.length > 0, 'no request was captured');
    const kinds = {};
    for (const r of this.requests) {
      const k = Recorder.classify(r);
      kinds[k] = (kinds[k] || 0) + 1;
    }
    console.log(`EVIDENCE ${name}: ${this.evidence(0)}`);
    assertEq(kinds, { [protocol]: this.requests.length }, `protocol of every request (expected ${protocol})`);
    const ops = [...new Set(this.requests.map(Recorder.operation))].sort();
    console.log(`       ${this.requests.length} requests, all ${protocol.toUpperCase()}; operations: ${ops.join(' ')}`);
  }
}

// Runs named async steps; after a failing "create queues" the rest is skipped.
async function runSteps(steps) {
  const failures = [];
  for (const [title, fn] of steps) {
    if (failures.includes('create queues')) break;
    const t0 = Date.now();
    try {
      await fn();
      console.log(`  ok   ${title.padEnd(28)} (${((Date.now() - t0) / 1000).toFixed(2)}s)`);
    } catch (err) {
      failures.push(title);
      console.log(`  FAIL ${title.padEnd(28)} ${err && err.name}: ${err && err.message}`);
      if (err && err.$metadata) console.log(`       $metadata=${safeJson(err.$metadata)} Code=${err.Code}`);
      if (err && err.statusCode) console.log(`       statusCode=${err.statusCode} code=${err.code}`);
      if (err && err.$response) console.log(`       $response=${safeJson({ statusCode: err.$response.statusCode, headers: err.$response.headers })}`);
      if (err && err.stack) console.log('       ' + err.stack.split('\n').slice(1, 4).join('\n       '));
    }
  }
  return failures;
}

function parseArgs() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, '')] = argv[i + 1];
  if (!out.endpoint) throw new Error('--endpoint is required');
  return out;
}

// Fail hard instead of hanging forever if something never resolves.
function guard(seconds) {
  const t = setTimeout(() => {
    console.log(`  FAIL scenario did not finish within ${seconds}s`);
    process.exit(1);
  }, seconds * 1000);
  t.unref();
}

// Message attributes reduced to what was sent: DataType, StringValue, BinaryValue as hex (drops
// the empty StringListValues/BinaryListValues some clients add while parsing).
function plainAttrs(attrs) {
  const out = {};
  for (const [k, v] of Object.entries(attrs || {})) {
    out[k] = { DataType: v.DataType };
    if (v.StringValue !== undefined) out[k].StringValue = v.StringValue;
    if (v.BinaryValue !== undefined) {
      const b = v.BinaryValue;
      out[k].BinaryValue = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
    }
  }
  return out;
}

const ATTRS_BINARY = Buffer.from([0x00, 0x01, 0xfe, 0xff, 0x80, 0x0a, 0x7f]);

module.exports = {
  md5Hex, md5OfAttributes, sleep, assert, assertEq, Recorder, runSteps, parseArgs, guard, safeJson, plainAttrs, ATTRS_BINARY,
};
