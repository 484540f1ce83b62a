import { randomBytes } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { sendValidationError } from './validation.js';
import { requireScope, type AuthLocals } from './bearer-auth.js';
import { rememberApiRequest } from './last-request.js';
import type { Collection, Store } from './store.js';

const statusSchema = z.enum(['open', 'done']);

const storedTaskSchema = z.object({
  id: z.string(),
  accountId: z.string(),
  title: z.string(),
  notes: z.string().nullable(),
  status: statusSchema,
  createdAt: z.string(),
  updatedAt: z.string(),
});
type StoredTask = z.infer<typeof storedTaskSchema>;

const createSchema = z.object({
  title: z.string().trim().min(1).max(200),
  notes: z.string().max(10_000).optional(),
});

const updateSchema = z.object({
  title: z.string().trim().min(1).max(200).optional(),
  notes: z.string().max(10_000).nullable().optional(),
  status: statusSchema.optional(),
});

const listQuerySchema = z.object({ status: statusSchema.optional() });

type Res = Response<unknown, AuthLocals>;
type IdRequest = Request<{ id: string }>;

/** `/tasks` and `/me`; expects bearerAuth to have run before it. */
export function tasksRouter(store: Store): Router {
  const tasks = store.collection('tasks', (raw) => storedTaskSchema.safeParse(raw).data);
  const router = express.Router();

  router.use(['/tasks', '/me'], (req, _res, next) => {
    rememberApiRequest(req);
    next();
  });

  router.get('/me', (_req, res: Res) => {
    res.json({ id: res.locals.auth.accountId });
  });

  router.get('/tasks', (req, res: Res) => {
    if (!requireScope(res, 'tasks:read')) return;
    const query = listQuerySchema.safeParse(req.query);
    if (!query.success) {
      sendValidationError(res, query.error);
      return;
    }
    const own = [...tasks.entries.values()].filter(
      (t) =>
        t.accountId === res.locals.auth.accountId &&
        (!query.data.status || t.status === query.data.status),
    );
    res.json({ tasks: own.map(present) });
  });

  router.get('/tasks/:id', (req: IdRequest, res: Res) => {
    if (!requireScope(res, 'tasks:read')) return;
    const task = findOwn(tasks, req, res);
    if (task) res.json(present(task));
  });

  router.post('/tasks', async (req, res: Res) => {
    if (!requireScope(res, 'tasks:write')) return;
    const body = createSchema.safeParse(req.body);
    if (!body.success) {
      sendValidationError(res, body.error);
      return;
    }
    const now = new Date().toISOString();
    const task: StoredTask = {
      id: `t_${randomBytes(6).toString('base64url')}`,
      accountId: res.locals.auth.accountId,
      title: body.data.title,
      notes: body.data.notes ?? null,
      status: 'open',
      createdAt: now,
      updatedAt: now,
    };
    tasks.entries.set(task.id, task);
    await tasks.save();
    res.status(201).location(`/tasks/${task.id}`).json(present(task));
  });

  router.patch('/tasks/:id', async (req: IdRequest, res: Res) => {
    if (!requireScope(res, 'tasks:write')) return;
    const task = findOwn(tasks, req, res);
    if (!task) return;
    const body = updateSchema.safeParse(req.body);
    if (!body.success) {
      sendValidationError(res, body.error);
      return;
    }
    const { title, notes, status } = body.data;
    const updated: StoredTask = {
      ...task,
      title: title ?? task.title,
      notes: notes === undefined ? task.notes : notes,
      status: status ?? task.status,
      updatedAt: new Date().toISOString(),
    };
    tasks.entries.set(task.id, updated);
    await tasks.save();
    res.json(present(updated));
  });

  router.delete('/tasks/:id', async (req: IdRequest, res: Res) => {
    if (!requireScope(res, 'tasks:write')) return;
    const task = findOwn(tasks, req, res);
    if (!task) return;
    tasks.entries.delete(task.id);
    await tasks.save();
    res.status(204).end();
  });

  return router;
}

/** Another account's task is reported as missing, so ids leak nothing. */
function findOwn(tasks: Collection<StoredTask>, req: IdRequest, res: Res): StoredTask | undefined {
  const task = tasks.entries.get(req.params.id);
  if (task?.accountId === res.locals.auth.accountId) return task;
  res.status(404).json({ error: 'not_found' });
  return undefined;
}

function present({ accountId: _accountId, ...task }: StoredTask): Omit<StoredTask, 'accountId'> {
  return task;
}
