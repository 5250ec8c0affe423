import { createHash } from 'node:crypto';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';

export const md5Hex = (data: string | Uint8Array): string => createHash('md5').update(data).digest('hex');

/**
 * MD5OfMessageAttributes, computed independently of the server: names sorted; each name, data
 * type and value as a 4-byte big-endian length and its bytes, with a transport byte (1 string,
 * 2 binary) before the value.
 */
export function md5OfAttributes(attrs: Record<string, MessageAttributeValue>): string {
  const parts: Buffer[] = [];
  const field = (b: Uint8Array) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    parts.push(len, Buffer.from(b));
  };
  for (const name of Object.keys(attrs).sort()) {
    const v = attrs[name];
    field(Buffer.from(name, 'utf8'));
    field(Buffer.from(v.DataType ?? '', 'utf8'));
    if (v.BinaryValue !== undefined) {
      parts.push(Buffer.from([2]));
      field(v.BinaryValue);
    } else {
      parts.push(Buffer.from([1]));
      field(Buffer.from(v.StringValue ?? '', 'utf8'));
    }
  }
  return md5Hex(Buffer.concat(parts));
}

// Reference vectors (the protocol reference, section 6.4), as in tests/compat/js/common.js.
const vectors: [Record<string, MessageAttributeValue>, string][] = [
  [{ Foo: { DataType: 'String', StringValue: 'Bar' } }, 'ae7155c6026991b6d54b11589678bf9c'],
  [
    { timestamp: { DataType: 'Number.java.lang.Long', StringValue: '1493147359900' } },
    '2e2e4876d8e0bd6b8c2c8f556831c349',
  ],
  [
    { b: { DataType: 'Binary', BinaryValue: Uint8Array.from([0, 1, 2]) } },
    '0911ac989fa4a4b3440f074ba9941547',
  ],
];
for (const [attrs, want] of vectors) {
  if (md5OfAttributes(attrs) !== want) throw new Error(`md5OfAttributes self-test failed for ${want}`);
}

/** Attributes reduced to what was sent (drops the empty list members the SDK parses in). */
export function plain(attrs: Record<string, MessageAttributeValue> = {}) {
  const out: Record<string, { DataType?: string; StringValue?: string; BinaryValue?: string }> = {};
  for (const [k, v] of Object.entries(attrs)) {
    out[k] = { DataType: v.DataType };
    if (v.StringValue !== undefined) out[k].StringValue = v.StringValue;
    if (v.BinaryValue !== undefined) out[k].BinaryValue = Buffer.from(v.BinaryValue).toString('hex');
  }
  return out;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `cond` every 20 ms until it is true or `ms` have passed. */
export async function until(cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await sleep(20);
  }
}
