// Package webhook calls users' HTTPS webhooks, as the admission webhooks
// and CustomResourceDefinition conversion do: the client of a CA bundle,
// the URL of a service reference, and one JSON request and answer.
package webhook
