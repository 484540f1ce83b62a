// `npm run client:generate`: the client's types from the OpenAPI documents, built in this
// process from the same zod registry the server serves them from (no server, no database).
import { writeFile } from 'node:fs/promises';
import '../app.js';
import { connectedUsersDocument, managementDocument } from '../openapi/documents.js';
import { GENERATED_FILES, generatedPath, generatedTypes } from './generate.js';

// Any URL: the generated types do not depend on the documents' server.
const SERVER = 'http://127.0.0.1:3000';

await writeFile(
  generatedPath('connectedUsers'),
  await generatedTypes('connectedUsers', JSON.stringify(connectedUsersDocument(SERVER))),
);
await writeFile(
  generatedPath('management'),
  await generatedTypes('management', JSON.stringify(managementDocument(SERVER))),
);
console.log(`wrote ${Object.values(GENERATED_FILES).join(' and ')}`);
