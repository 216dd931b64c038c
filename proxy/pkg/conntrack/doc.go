// Package conntrack deletes the conntrack entries that would keep UDP
// traffic flowing to endpoints that are gone (UDP has no connection to
// end, so an entry DNATed to a removed pod would live on), and the
// entries of packets that reached a Service IP while it had no endpoints,
// as upstream's pkg/proxy/conntrack does, through netlink.
package conntrack
