/**
 * Small OpenAPI documents written by hand for the importer's tests: a pet store in 3.0 (JSON),
 * the same store in 3.1 (YAML), and in Swagger 2.0. Each exercises what real documents have:
 * shared path parameters, `$ref`s to parameters, request bodies and schemas, a recursive
 * schema, security schemes of every kind, operations without an operationId, ones that collide
 * once normalized, and ones an action cannot send.
 */

export const petstore30 = {
  openapi: '3.0.3',
  info: { title: 'Pet Store', version: '1.0.0' },
  servers: [
    { url: 'https://{region}.pets.example/v1', variables: { region: { default: 'eu' } } },
    { url: 'https://backup.pets.example/v1' },
  ],
  security: [{ petsOAuth: ['pets:read'] }],
  paths: {
    '/pets': {
      get: {
        operationId: 'listPets',
        summary: 'List pets',
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', maximum: 100 } },
          {
            name: 'tags',
            in: 'query',
            schema: { type: 'array', items: { type: 'string' } },
          },
          {
            name: 'kinds',
            in: 'query',
            style: 'form',
            explode: false,
            schema: { type: 'array', items: { type: 'string' } },
          },
          { name: 'X-Request-Id', in: 'header', schema: { type: 'string' } },
          { name: 'session', in: 'cookie', schema: { type: 'string' } },
          { name: 'Authorization', in: 'header', schema: { type: 'string' } },
        ],
        responses: { '200': { description: 'ok' } },
      },
      post: {
        operationId: 'createPet',
        summary: 'Create a pet',
        security: [{ petsOAuth: ['pets:write'] }, { apiKey: [] }],
        requestBody: { $ref: '#/components/requestBodies/NewPet' },
        responses: { '201': { description: 'created' } },
      },
    },
    '/pets/{petId}': {
      parameters: [{ $ref: '#/components/parameters/PetId' }],
      get: {
        operationId: 'getPet',
        responses: { '200': { description: 'ok' } },
      },
      put: {
        operationId: 'pets/update',
        'x-gatehouse-scope': 'destructive',
        requestBody: {
          required: true,
          content: {
            'application/merge-patch+json': { schema: { $ref: '#/components/schemas/Pet' } },
          },
        },
        responses: { '200': { description: 'ok' } },
      },
      delete: {
        operationId: 'deletePet',
        responses: { '204': { description: 'gone' } },
      },
      head: { responses: { '200': { description: 'ok' } } },
      options: { responses: { '200': { description: 'ok' } } },
    },
    '/pets/{petId}/photo': {
      parameters: [{ $ref: '#/components/parameters/PetId' }],
      post: {
        operationId: 'uploadPhoto',
        requestBody: {
          required: true,
          content: { 'multipart/form-data': { schema: { type: 'object' } } },
        },
        responses: { '200': { description: 'ok' } },
      },
      patch: {
        operationId: 'tagPhoto',
        parameters: [{ name: 'seen', in: 'cookie', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/owners/{ownerId}/pets': {
      get: {
        parameters: [{ name: 'ownerId', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/pet-trees': {
      post: {
        operationId: 'list-pets',
        requestBody: {
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Tree' } } },
        },
        responses: { '200': { description: 'ok' } },
      },
    },
    '/pets-again': {
      get: { operationId: 'list_pets', responses: { '200': { description: 'ok' } } },
    },
    '/admin': {
      get: {
        operationId: 'adminPanel',
        'x-gatehouse-scope': 'harmless',
        responses: { '200': { description: 'ok' } },
      },
    },
  },
  components: {
    parameters: {
      PetId: {
        name: 'petId',
        in: 'path',
        required: true,
        description: 'The pet',
        schema: { type: 'string' },
      },
    },
    requestBodies: {
      NewPet: {
        required: true,
        content: {
          'application/json': { schema: { $ref: '#/components/schemas/NewPet' } },
          'application/xml': { schema: { type: 'object' } },
        },
      },
    },
    schemas: {
      NewPet: {
        type: 'object',
        required: ['name', 'id'],
        properties: {
          id: { type: 'integer', readOnly: true },
          name: { type: 'string', minLength: 1 },
          nickname: { type: 'string', nullable: true },
          age: { type: 'integer', minimum: 0, exclusiveMinimum: true },
          owner: { nullable: true, allOf: [{ $ref: '#/components/schemas/Owner' }] },
          'x-secret': { type: 'string' },
        },
        'x-internal': true,
      },
      Owner: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      Pet: {
        allOf: [
          { $ref: '#/components/schemas/NewPet' },
          { type: 'object', properties: { id: { type: 'integer' } } },
        ],
      },
      Tree: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string' },
          children: { type: 'array', items: { $ref: '#/components/schemas/Tree' } },
        },
      },
    },
    securitySchemes: {
      petsOAuth: {
        type: 'oauth2',
        flows: {
          authorizationCode: {
            authorizationUrl: 'https://auth.pets.example/authorize',
            tokenUrl: 'https://auth.pets.example/token',
            refreshUrl: 'https://auth.pets.example/refresh',
            scopes: { 'pets:read': 'Read your pets', 'pets:write': 'Change your pets' },
          },
          clientCredentials: { tokenUrl: 'https://auth.pets.example/token', scopes: {} },
        },
      },
      apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      basic: { type: 'http', scheme: 'basic' },
      cookieKey: { type: 'apiKey', in: 'cookie', name: 'key' },
      oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://auth.pets.example/.well-known' },
      machines: {
        type: 'oauth2',
        flows: { clientCredentials: { tokenUrl: 'https://auth.pets.example/token', scopes: {} } },
      },
      mtls: { type: 'mutualTLS' },
    },
  },
};

/** The same store in OpenAPI 3.1, as YAML: 2020-12 schemas, `$ref` with siblings, `type` lists. */
export const petstore31Yaml = `
openapi: 3.1.0
info:
  title: Pet Store
  version: 2.0.0
servers:
  - url: /api/v2
paths:
  /pets:
    get:
      operationId: listPets
      parameters:
        - name: limit
          in: query
          schema:
            type: [integer, "null"]
            exclusiveMinimum: 0
      responses:
        "200":
          description: ok
    post:
      operationId: createPet
      security:
        - bearer: []
          apiKey: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: "#/components/schemas/NewPet"
              description: The pet to create
      responses:
        "201":
          description: created
  /pets/{petId}:
    get:
      operationId: getPet
      parameters:
        - name: petId
          in: path
          required: true
          schema:
            type: string
      responses:
        "200":
          description: ok
components:
  schemas:
    NewPet:
      type: object
      required: [name]
      properties:
        name:
          type: string
        tag:
          type: [string, "null"]
        parent:
          $ref: "#/components/schemas/NewPet"
  securitySchemes:
    bearer:
      type: http
      scheme: bearer
    apiKey:
      type: apiKey
      in: query
      name: key
`;

export const petstore20 = {
  swagger: '2.0',
  info: { title: 'Old Pet Store', version: '0.9' },
  host: 'old.pets.example',
  basePath: '/api',
  schemes: ['http', 'https'],
  consumes: ['application/json'],
  securityDefinitions: {
    oauth: {
      type: 'oauth2',
      flow: 'accessCode',
      authorizationUrl: 'https://old.pets.example/oauth/authorize',
      tokenUrl: 'https://old.pets.example/oauth/token',
      scopes: { read: 'Read' },
    },
    implicitOnly: {
      type: 'oauth2',
      flow: 'implicit',
      authorizationUrl: 'https://old.pets.example/oauth/authorize',
      scopes: {},
    },
    basic: { type: 'basic' },
    key: { type: 'apiKey', in: 'query', name: 'api_key' },
  },
  security: [{ oauth: ['read'] }],
  parameters: {
    PetId: { name: 'petId', in: 'path', required: true, type: 'integer', format: 'int64' },
  },
  paths: {
    '/pets': {
      get: {
        operationId: 'findPets',
        parameters: [
          {
            name: 'status',
            in: 'query',
            type: 'array',
            items: { type: 'string', enum: ['available', 'sold'] },
            collectionFormat: 'multi',
          },
          { name: 'ids', in: 'query', type: 'array', items: { type: 'integer' } },
          { name: 'api_key', in: 'query', type: 'string' },
        ],
        responses: { '200': { description: 'ok', schema: { $ref: '#/definitions/Pet' } } },
      },
      post: {
        operationId: 'addPet',
        parameters: [
          { name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/Pet' } },
        ],
        responses: { '201': { description: 'created' } },
      },
    },
    '/pets/{petId}': {
      parameters: [{ $ref: '#/parameters/PetId' }],
      delete: { operationId: 'deletePet', responses: { '204': { description: 'gone' } } },
      post: {
        operationId: 'updatePetWithForm',
        consumes: ['application/x-www-form-urlencoded'],
        parameters: [{ name: 'name', in: 'formData', required: true, type: 'string' }],
        responses: { '200': { description: 'ok' } },
      },
    },
  },
  definitions: {
    Pet: {
      type: 'object',
      required: ['name'],
      properties: {
        id: { type: 'integer', format: 'int64', readOnly: true },
        name: { type: 'string', example: 'doggie' },
        category: { $ref: '#/definitions/Category' },
      },
    },
    Category: { type: 'object', properties: { name: { type: 'string' } } },
  },
};
