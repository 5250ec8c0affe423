// The two ways the console talks to the server: the SQS API of this origin in the AWS JSON 1.0
// protocol (exactly what an SDK sends, minus the signature), and the /_localsqs admin endpoints.

export class ApiError extends Error {
  constructor(message, { code = '', status = 0, body = null } = {}) {
    super(message);
    this.code = code;
    this.status = status;
    this.body = body;
  }
}

// A server started with --admin-token (or --auth sigv4) answers 401 until the console shows the
// token; the console asks for it once and keeps it for this tab only (sessionStorage).
const TOKEN_KEY = 'localsqs-admin-token';

const headersFor = (token) => (token ? { Authorization: `Bearer ${token}` } : {});

/**
 * Runs `send` (a fetch), asking for the admin token and trying once more on a 401. Requests
 * refused at the same time share one question: a request refused with the token it had sends
 * the newer one if another request's answer brought it, and asks only otherwise.
 */
async function withToken(send) {
  const used = sessionStorage.getItem(TOKEN_KEY);
  let resp = await send(headersFor(used));
  if (resp.status !== 401) return resp;
  let token = sessionStorage.getItem(TOKEN_KEY);
  if (token === used) {
    token = (window.prompt('This localsqs server needs its admin token (--admin-token):') || '').trim();
    if (!token) return resp;
    sessionStorage.setItem(TOKEN_KEY, token);
  }
  return send(headersFor(token));
}

async function parse(resp) {
  const text = await resp.text();
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
}

/** Calls an SQS action: sqs('SendMessage', { QueueUrl, MessageBody }). */
export async function sqs(action, params = {}) {
  const resp = await withToken((auth) => fetch('/', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-amz-json-1.0',
      'X-Amz-Target': `AmazonSQS.${action}`,
      ...auth,
    },
    body: JSON.stringify(params),
  }));
  const data = await parse(resp);
  if (!resp.ok) {
    const code = String(data.__type || '').split('#').pop();
    const text = data.message || data.Message || resp.statusText;
    throw new ApiError(`${action}: ${code ? `${code}: ` : ''}${text}`, { code, status: resp.status, body: data });
  }
  return data;
}

/** Calls an admin endpoint below /_localsqs/: admin('clock', { method: 'POST', body: {...} }). */
export async function admin(path, { method = 'GET', body } = {}) {
  const resp = await withToken((auth) => fetch(`/_localsqs/${path}`, {
    method,
    headers: body === undefined ? auth : { 'Content-Type': 'application/json', ...auth },
    body: body === undefined ? undefined : JSON.stringify(body),
  }));
  const data = await parse(resp);
  if (!resp.ok) {
    throw new ApiError(data.error || data.message || `${resp.status} ${resp.statusText}`, { status: resp.status, body: data });
  }
  return data;
}

/** The query string of an object, leaving out empty values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** A queue's attributes as an object (GetQueueAttributes All). */
export async function attributes(url) {
  const r = await sqs('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['All'] });
  return r.Attributes || {};
}

/** The ARN of a queue named `name` (for RedrivePolicy), through the API. */
export async function arnOf(name) {
  const { QueueUrl } = await sqs('GetQueueUrl', { QueueName: name });
  const r = await sqs('GetQueueAttributes', { QueueUrl, AttributeNames: ['QueueArn'] });
  return r.Attributes.QueueArn;
}
