// Package app tests skiff-controller-manager as a daemon against a real
// API server: with its own identity (so its RBAC role is exercised), leader
// election between two replicas, and its health and metrics endpoints.
package app
