// Package services holds the integration tests of the EndpointSlice and
// Endpoints controllers: a real API server (testserver) and the real
// controller manager (cmtest), with the tests playing the kubelet by
// writing pod status.
package services
