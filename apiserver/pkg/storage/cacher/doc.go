// Package cacher serves watches and cached lists of one resource from memory.
//
// A Cacher lists its resource's prefix from etcd once, then keeps one etcd
// watch open from that revision. Each change is decoded once and applied to
// an in-memory copy of the current state and to a bounded window of recent
// events. Every watcher of the resource is served from that window, so a
// thousand watchers cost one etcd watch:
//
//   - a watch from resourceVersion N replays the window's events after N,
//     then follows new events; no event is lost or repeated. N older than the
//     window answers 410 Gone, and the client lists again;
//   - a watch without resourceVersion (or "0") starts with the current state
//     as ADDED events;
//   - a watcher's selector is applied to both the old and the new state, so an
//     object that leaves the selector arrives as DELETED;
//   - watchers that asked for bookmarks get BOOKMARK events carrying the
//     latest revision, which etcd progress notifications keep moving even
//     when the resource itself is quiet;
//   - a watcher that cannot keep up is closed rather than allowed to stall
//     everyone; it resumes from its last resourceVersion.
//
// Consistent lists (no resourceVersion) are served from the cache too: the
// cacher reads etcd's current revision and waits until the cache has caught
// up with it, which is what upstream's consistent-list-from-cache does.
package cacher
