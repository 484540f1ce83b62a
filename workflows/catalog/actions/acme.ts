import { z } from 'zod';
import { defineAction } from '../types.js';

const taskId = z.string().min(1).max(64).meta({ description: 'The task id, e.g. t_abc123' });
const taskPath = (id: string) => `/tasks/${encodeURIComponent(id)}`;

/** The demo app's task API (infra/demo-app): actions of every scope. */
export const acmeActions = [
  defineAction({
    app: 'acme',
    name: 'list_tasks',
    scope: 'read',
    description: "List the user's tasks, optionally only open or done ones.",
    input: z.strictObject({ status: z.enum(['open', 'done']).optional() }),
    request: (input) => ({ method: 'GET', path: '/tasks', query: { status: input.status } }),
  }),
  defineAction({
    app: 'acme',
    name: 'get_task',
    scope: 'read',
    description: 'Get one task by id.',
    input: z.strictObject({ id: taskId }),
    request: (input) => ({ method: 'GET', path: taskPath(input.id) }),
  }),
  defineAction({
    app: 'acme',
    name: 'create_task',
    scope: 'write',
    description: 'Create a task.',
    input: z.strictObject({
      title: z.string().min(1).max(200),
      notes: z.string().max(5000).optional(),
    }),
    request: (input) => ({ method: 'POST', path: '/tasks', body: input }),
  }),
  defineAction({
    app: 'acme',
    name: 'update_task',
    scope: 'write',
    description: "Change a task's title, notes or status.",
    input: z.strictObject({
      id: taskId,
      title: z.string().min(1).max(200).optional(),
      notes: z.string().max(5000).optional(),
      status: z.enum(['open', 'done']).optional(),
    }),
    request: ({ id, ...changes }) => ({ method: 'PATCH', path: taskPath(id), body: changes }),
  }),
  defineAction({
    app: 'acme',
    name: 'delete_task',
    scope: 'destructive',
    description: 'Delete a task for good.',
    input: z.strictObject({ id: taskId }),
    request: (input) => ({ method: 'DELETE', path: taskPath(input.id) }),
    result: () => ({ deleted: true }),
  }),
];
