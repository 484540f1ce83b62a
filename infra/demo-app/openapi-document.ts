import type { Router } from 'express';
import express from 'express';

/**
 * The app's own OpenAPI 3.1 description of its task API, served at `GET /openapi.json`: so the
 * demo can be imported as an OpenAPI app (`gatehouse apps import … --url <app>/openapi.json`)
 * and its users connect through the OAuth 2.0 flow it describes, as well as through the
 * catalog's `acme`. URLs are absolute, built from the app's own base URL (its issuer).
 */
export function openApiDocument(baseUrl: string): Record<string, unknown> {
  const task = { $ref: '#/components/schemas/Task' };
  const notFound = { description: 'No such task of this account' };
  const id = {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string', maxLength: 100 },
  };
  const read = [{ acme_oauth: ['tasks:read'] }];
  const write = [{ acme_oauth: ['tasks:write'] }];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Acme Tasks',
      version: '1.0.0',
      description: "The demo app's task API: each account sees and changes its own tasks.",
    },
    servers: [{ url: baseUrl }],
    paths: {
      '/me': {
        get: {
          operationId: 'getMe',
          summary: 'The account the token was granted by',
          // Any token of the account will do: no scope is needed.
          security: [{ acme_oauth: [] }],
          responses: {
            '200': {
              description: 'The account',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: { id: { type: 'string' } },
                    required: ['id'],
                  },
                },
              },
            },
          },
        },
      },
      '/tasks': {
        get: {
          operationId: 'listTasks',
          summary: "List the account's tasks",
          security: read,
          parameters: [
            { name: 'status', in: 'query', schema: { type: 'string', enum: ['open', 'done'] } },
          ],
          responses: {
            '200': {
              description: 'The tasks',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: { tasks: { type: 'array', items: task } },
                    required: ['tasks'],
                  },
                },
              },
            },
          },
        },
        post: {
          operationId: 'createTask',
          summary: 'Create a task',
          security: write,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    title: { type: 'string', minLength: 1, maxLength: 200 },
                    notes: { type: 'string', maxLength: 10000 },
                  },
                  required: ['title'],
                  additionalProperties: false,
                },
              },
            },
          },
          responses: {
            '201': {
              description: 'The new task',
              content: { 'application/json': { schema: task } },
            },
          },
        },
      },
      '/tasks/{id}': {
        get: {
          operationId: 'getTask',
          summary: 'One task',
          security: read,
          parameters: [id],
          responses: {
            '200': { description: 'The task', content: { 'application/json': { schema: task } } },
            '404': notFound,
          },
        },
        patch: {
          operationId: 'updateTask',
          summary: 'Change a task',
          security: write,
          parameters: [id],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    title: { type: 'string', minLength: 1, maxLength: 200 },
                    notes: { type: ['string', 'null'], maxLength: 10000 },
                    status: { type: 'string', enum: ['open', 'done'] },
                  },
                  additionalProperties: false,
                },
              },
            },
          },
          responses: {
            '200': { description: 'The task', content: { 'application/json': { schema: task } } },
            '404': notFound,
          },
        },
        delete: {
          operationId: 'deleteTask',
          summary: 'Delete a task',
          security: write,
          parameters: [id],
          responses: { '204': { description: 'Deleted' }, '404': notFound },
        },
      },
    },
    components: {
      securitySchemes: {
        acme_oauth: {
          type: 'oauth2',
          description: "The app's own OAuth 2.0 server (PKCE required).",
          flows: {
            authorizationCode: {
              authorizationUrl: `${baseUrl}/auth`,
              tokenUrl: `${baseUrl}/token`,
              refreshUrl: `${baseUrl}/token`,
              // Every scope the app grants, in the words of its consent page.
              scopes: {
                'tasks:read': 'See your tasks',
                'tasks:write': 'Create, change and delete your tasks',
                offline_access: 'Stay connected when you are away',
                openid: 'Know which account you signed in with',
              },
            },
          },
        },
      },
      schemas: {
        Task: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            title: { type: 'string' },
            notes: { type: ['string', 'null'] },
            status: { type: 'string', enum: ['open', 'done'] },
            createdAt: { type: 'string', format: 'date-time' },
            updatedAt: { type: 'string', format: 'date-time' },
          },
          required: ['id', 'title', 'notes', 'status', 'createdAt', 'updatedAt'],
        },
      },
    },
  };
}

/** `GET /openapi.json`, public like any API description. */
export function openApiRouter(baseUrl: string): Router {
  const router = express.Router();
  const document = JSON.stringify(openApiDocument(baseUrl));
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(document);
  });
  return router;
}
