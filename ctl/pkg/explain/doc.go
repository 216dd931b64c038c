// Package explain documents kinds and fields from the server's OpenAPI v3
// documents (/openapi/v3 lists one document per group-version), as kubectl
// explain does: the group, kind and version, the description, and the fields
// with their types, following $ref through nested schemas for a field path
// such as deployment.spec.template.
package explain
