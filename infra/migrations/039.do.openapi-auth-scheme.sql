-- Which of the document's security schemes an OpenAPI app's users connect with, when the operator
-- chose one; null: chosen from the accepted snapshot (the scheme that serves the most operations).
-- A user has one connection per app, so an app is connected one way.
alter table openapi_apps add column auth_scheme text;
