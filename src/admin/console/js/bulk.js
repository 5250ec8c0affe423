// What the console does to the messages selected on a queue's page: delete them, or move them
// to another queue (POST /_localsqs/queues/<name>/messages/delete and …/move), by id and
// without receiving them.

import { h, fmtInt, toast, field, openDialog, confirmDialog, val } from './dom.js';
import { admin, query } from './api.js';

const plural = (n) => `${fmtInt(n)} ${n === 1 ? 'message' : 'messages'}`;

/** Why some of the selection was not acted on: deleted meanwhile, or received and deleted. */
function report(verb, r) {
  const gone = r.missing.length ? `; ${plural(r.missing.length)} ${r.missing.length === 1 ? 'was' : 'were'} no longer there` : '';
  toast(`${verb} ${plural(r.done.length)}${gone}`);
}

/** Asks, then deletes the selected messages of queue `name`. */
export function deleteDialog({ name, path, scope, ids, done }) {
  return confirmDialog(`Delete ${plural(ids.length)}?`,
    `Deletes the selected ${ids.length === 1 ? 'message' : 'messages'} from ${name}, whatever their state, without receiving them.`,
    'Delete messages', async () => {
      const r = await admin(`${path}/delete${query(scope)}`, { method: 'POST', body: { ids } });
      report('Deleted', r);
      await done();
    });
}

/** The dialog that moves the selected messages of queue `name` to another queue. */
export async function moveDialog({ name, path, scope, ids, done }) {
  const targets = h('datalist', { id: `move-targets-${Date.now()}` });
  const to = h('input', { name: 'to', required: true, autofocus: true, autocomplete: 'off', spellcheck: 'false', list: targets.id });
  const group = h('input', { name: 'group', autocomplete: 'off', spellcheck: 'false' });
  const body = [
    h('p', {}, `Each message is sent to the target with its body and attributes (as a new message, never received) `,
      `and deleted from ${name}, both in one step.`),
    field('Target queue', to, 'A queue name in the same region and account, or a queue URL.'),
    field('Group id for messages without one', group,
      'Needed when the target is a FIFO queue: messages that have a group id keep it.'),
    targets,
  ];
  // Suggest the queues of the same region and account (the first 500 by name).
  admin(`queues${query({ limit: 500 })}`).then((list) => {
    for (const q of list.queues) {
      const here = (!scope.region || q.region === scope.region) && (!scope.account || q.account === scope.account);
      if (here && q.name !== name) targets.append(h('option', { value: q.name }));
    }
  }).catch(() => {});
  return openDialog({
    title: `Move ${plural(ids.length)}`, submit: 'Move', body,
    onSubmit: async (form) => {
      const target = val(form, 'to');
      const r = await admin(`${path}/move${query(scope)}`, {
        method: 'POST',
        body: { ids, to: target, group_id: val(form, 'group') || undefined },
      });
      report(`Moved to ${target.split('/').pop()}:`, r);
      await done();
    },
  });
}
