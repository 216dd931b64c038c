package garbagecollector

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// objectReference identifies an object: an owner reference plus the
// namespace.
type objectReference struct {
	metav1.OwnerReference
	Namespace string
}

func (r objectReference) String() string {
	return r.APIVersion + "/" + r.Kind + ", namespace: " + r.Namespace + ", name: " + r.Name + ", uid: " + string(r.UID)
}

// node is an object in the graph.
type node struct {
	identity objectReference
	// owners are the object's owner references as last observed.
	owners     []metav1.OwnerReference
	dependents map[*node]struct{}
	// virtual: known only as someone's owner, not observed yet.
	virtual bool
	// beingDeleted: the object has a deletionTimestamp.
	beingDeleted bool
	// deletingDependents: being deleted with the foregroundDeletion finalizer.
	deletingDependents bool
}

// graph is the owner/dependent graph, keyed by UID.
type graph struct {
	mu    sync.RWMutex
	nodes map[types.UID]*node
}

func newGraph() *graph { return &graph{nodes: map[types.UID]*node{}} }

// nodeView is a consistent copy of a node's fields for the workers.
type nodeView struct {
	identity           objectReference
	virtual            bool
	beingDeleted       bool
	deletingDependents bool
	dependents         []dependentView
}

// dependentView is a dependent and its reference to the node.
type dependentView struct {
	identity           objectReference
	deletingDependents bool
	blocking           bool
}

func (g *graph) view(uid types.UID) (nodeView, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n, ok := g.nodes[uid]
	if !ok {
		return nodeView{}, false
	}
	v := nodeView{
		identity: n.identity, virtual: n.virtual,
		beingDeleted: n.beingDeleted, deletingDependents: n.deletingDependents,
	}
	for d := range n.dependents {
		dv := dependentView{identity: d.identity, deletingDependents: d.deletingDependents}
		for _, ref := range d.owners {
			if ref.UID == uid && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
				dv.blocking = true
			}
		}
		v.dependents = append(v.dependents, dv)
	}
	return v, true
}

// len is the number of nodes (tests).
func (g *graph) len() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.nodes)
}

// enqueuer is what graph updates ask the workers to look at.
type enqueuer struct {
	attemptToDelete []types.UID
	attemptToOrphan []types.UID
}

// observe records an added or updated object.
func (g *graph) observe(id objectReference, owners []metav1.OwnerReference, deleting bool, finalizers []string) enqueuer {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out enqueuer
	n, ok := g.nodes[id.UID]
	if !ok {
		n = &node{identity: id, dependents: map[*node]struct{}{}}
		g.nodes[id.UID] = n
		out.merge(g.link(n, owners))
	} else {
		if n.virtual {
			n.virtual = false
		}
		n.identity = id
		out.merge(g.relink(n, owners))
	}
	n.owners = owners
	n.beingDeleted = deleting
	if deleting && hasFinalizer(finalizers, metav1.FinalizerOrphanDependents) {
		out.attemptToOrphan = append(out.attemptToOrphan, id.UID)
	}
	if deleting && hasFinalizer(finalizers, metav1.FinalizerDeleteDependents) {
		n.deletingDependents = true
		for d := range n.dependents {
			out.attemptToDelete = append(out.attemptToDelete, d.identity.UID)
		}
		out.attemptToDelete = append(out.attemptToDelete, id.UID)
	} else {
		n.deletingDependents = false
	}
	return out
}

// link adds n as a dependent of each owner, creating virtual owners (which
// are to be checked) for owners not in the graph.
func (g *graph) link(n *node, owners []metav1.OwnerReference) enqueuer {
	var out enqueuer
	for _, ref := range owners {
		o, ok := g.nodes[ref.UID]
		if !ok {
			o = &node{identity: objectReference{OwnerReference: ref, Namespace: n.identity.Namespace}, dependents: map[*node]struct{}{}, virtual: true}
			g.nodes[ref.UID] = o
			out.attemptToDelete = append(out.attemptToDelete, ref.UID)
		}
		o.dependents[n] = struct{}{}
		if o.beingDeleted && !o.virtual {
			// A new dependent of an owner that is going away.
			out.attemptToDelete = append(out.attemptToDelete, n.identity.UID)
		}
	}
	return out
}

// relink updates n's owners; an owner waiting for its dependents that lost
// one (or its blocking) is looked at again.
func (g *graph) relink(n *node, owners []metav1.OwnerReference) enqueuer {
	var out enqueuer
	newRefs := map[types.UID]metav1.OwnerReference{}
	for _, r := range owners {
		newRefs[r.UID] = r
	}
	var added []metav1.OwnerReference
	oldRefs := map[types.UID]bool{}
	for _, r := range n.owners {
		oldRefs[r.UID] = true
		nr, still := newRefs[r.UID]
		o := g.nodes[r.UID]
		if !still {
			if o != nil {
				delete(o.dependents, n)
				if o.deletingDependents {
					out.attemptToDelete = append(out.attemptToDelete, o.identity.UID)
				}
			}
			continue
		}
		if o != nil && o.deletingDependents && blocks(r) && !blocks(nr) {
			out.attemptToDelete = append(out.attemptToDelete, o.identity.UID)
		}
	}
	for _, r := range owners {
		if !oldRefs[r.UID] {
			added = append(added, r)
		}
	}
	out.merge(g.link(n, added))
	return out
}

func blocks(r metav1.OwnerReference) bool {
	return r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion
}

// remove takes the node out of the graph (the object is gone) and returns
// what to look at: its dependents, and its owners waiting for dependents.
func (g *graph) remove(uid types.UID) enqueuer {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out enqueuer
	n, ok := g.nodes[uid]
	if !ok {
		return out
	}
	delete(g.nodes, uid)
	for _, r := range n.owners {
		if o := g.nodes[r.UID]; o != nil {
			delete(o.dependents, n)
			if o.deletingDependents {
				out.attemptToDelete = append(out.attemptToDelete, o.identity.UID)
			}
		}
	}
	for d := range n.dependents {
		out.attemptToDelete = append(out.attemptToDelete, d.identity.UID)
	}
	return out
}

func (e *enqueuer) merge(o enqueuer) {
	e.attemptToDelete = append(e.attemptToDelete, o.attemptToDelete...)
	e.attemptToOrphan = append(e.attemptToOrphan, o.attemptToOrphan...)
}

func hasFinalizer(fs []string, f string) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}
