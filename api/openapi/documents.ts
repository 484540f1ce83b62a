import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { connectedUsersRegistry, managementRegistry } from './registry.js';

type Document = ReturnType<OpenApiGeneratorV31['generateDocument']>;

export function managementDocument(serverUrl: string): Document {
  return new OpenApiGeneratorV31(managementRegistry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'management API',
      version: '1.0.0',
      description: 'Project-bound business settings of Gatehouse (SPEC.md §4.2).',
    },
    servers: [{ url: serverUrl }],
  });
}

export function connectedUsersDocument(serverUrl: string): Document {
  return new OpenApiGeneratorV31(connectedUsersRegistry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'connected-user API',
      version: '1.0.0',
      description:
        'Users, connections, actions, the proxy, audit, approvals and policies (SPEC.md §4.1).',
    },
    servers: [{ url: serverUrl }],
  });
}
