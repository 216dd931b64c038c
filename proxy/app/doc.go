// Package app is skiff-proxy: Options (flags), Setup, which builds the
// clients, informers, proxier, health and metrics servers, and Run, which
// installs the traffic safety (service route, egress guard, sysctls)
// before the first sync and then keeps the rules in line with the
// Services and EndpointSlices until its context ends. With --cleanup, Run
// removes everything the proxy puts into the kernel and returns.
package app
