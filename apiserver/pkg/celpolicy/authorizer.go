package celpolicy

import (
	"context"
	"fmt"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// The variables of the authorizer library, as upstream's: the authorizer
// of the request's user, and a check of the request's own resource.
const (
	VarAuthorizer      = "authorizer"
	VarRequestResource = "authorizer.requestResource"
)

// The CEL types of the authorizer library, with upstream's names.
var (
	AuthorizerType    = cel.ObjectType("kubernetes.authorization.Authorizer")
	PathCheckType     = cel.ObjectType("kubernetes.authorization.PathCheck")
	GroupCheckType    = cel.ObjectType("kubernetes.authorization.GroupCheck")
	ResourceCheckType = cel.ObjectType("kubernetes.authorization.ResourceCheck")
	DecisionType      = cel.ObjectType("kubernetes.authorization.Decision")
)

// AuthzRequest is what an expression asks the authorizer: a resource
// request (group, resource, subresource, namespace, name) or a path, with
// a verb.
type AuthzRequest struct {
	Verb            string
	ResourceRequest bool
	Group           string
	Resource        string
	Subresource     string
	Namespace       string
	Name            string
	Path            string
	// ServiceAccount, when set ("namespace/name"), asks for that service
	// account instead of the request's user.
	ServiceAccount string
}

// AuthorizeFunc answers an authorizer check of the request being
// admitted: whether it is allowed, the authorizer's reason, and an error
// when the decision could not be made.
type AuthorizeFunc func(ctx context.Context, r AuthzRequest) (allowed bool, reason string, err error)

// authorizerLib declares the authorizer library: authorizer.path(p),
// authorizer.group(g).resource(r).subresource(s).namespace(n).name(n),
// .check(verb) giving a Decision with allowed(), reason(), errored() and
// error(), and authorizer.serviceAccount(namespace, name).
type authorizerLib struct{}

func (authorizerLib) CompileOptions() []cel.EnvOption {
	str := cel.StringType
	return []cel.EnvOption{
		cel.Variable(VarAuthorizer, AuthorizerType),
		cel.Variable(VarRequestResource, ResourceCheckType),
		cel.Function("path", cel.MemberOverload("authorizer_path", []*cel.Type{AuthorizerType, str}, PathCheckType,
			cel.BinaryBinding(func(a, p ref.Val) ref.Val {
				return withAuthorizer(a, func(z authorizerVal) ref.Val { return pathCheckVal{z, str2(p)} })
			}))),
		cel.Function("group", cel.MemberOverload("authorizer_group", []*cel.Type{AuthorizerType, str}, GroupCheckType,
			cel.BinaryBinding(func(a, g ref.Val) ref.Val {
				return withAuthorizer(a, func(z authorizerVal) ref.Val { return groupCheckVal{z, str2(g)} })
			}))),
		cel.Function("serviceAccount", cel.MemberOverload("authorizer_serviceaccount", []*cel.Type{AuthorizerType, str, str}, AuthorizerType,
			cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				return withAuthorizer(args[0], func(z authorizerVal) ref.Val {
					z.serviceAccount = str2(args[1]) + "/" + str2(args[2])
					return z
				})
			}))),
		cel.Function("resource", cel.MemberOverload("groupcheck_resource", []*cel.Type{GroupCheckType, str}, ResourceCheckType,
			cel.BinaryBinding(func(g, r ref.Val) ref.Val {
				gc, ok := g.(groupCheckVal)
				if !ok {
					return types.MaybeNoSuchOverloadErr(g)
				}
				return resourceCheckVal{authorizer: gc.authorizer, group: gc.group, resource: str2(r)}
			}))),
		cel.Function("subresource", resourceSetter("resourcecheck_subresource", func(c *resourceCheckVal, v string) { c.subresource = v })),
		cel.Function("namespace", resourceSetter("resourcecheck_namespace", func(c *resourceCheckVal, v string) { c.namespace = v })),
		cel.Function("name", resourceSetter("resourcecheck_name", func(c *resourceCheckVal, v string) { c.name = v })),
		cel.Function("check",
			cel.MemberOverload("pathcheck_check", []*cel.Type{PathCheckType, str}, DecisionType,
				cel.BinaryBinding(func(p, verb ref.Val) ref.Val {
					pc, ok := p.(pathCheckVal)
					if !ok {
						return types.MaybeNoSuchOverloadErr(p)
					}
					return pc.authorizer.decide(AuthzRequest{Verb: str2(verb), Path: pc.path})
				})),
			cel.MemberOverload("resourcecheck_check", []*cel.Type{ResourceCheckType, str}, DecisionType,
				cel.BinaryBinding(func(r, verb ref.Val) ref.Val {
					rc, ok := r.(resourceCheckVal)
					if !ok {
						return types.MaybeNoSuchOverloadErr(r)
					}
					return rc.authorizer.decide(AuthzRequest{
						Verb: str2(verb), ResourceRequest: true, Group: rc.group, Resource: rc.resource,
						Subresource: rc.subresource, Namespace: rc.namespace, Name: rc.name,
					})
				}))),
		cel.Function("allowed", decisionGetter("decision_allowed", cel.BoolType, func(d decisionVal) ref.Val { return types.Bool(d.allowed) })),
		cel.Function("reason", decisionGetter("decision_reason", cel.StringType, func(d decisionVal) ref.Val { return types.String(d.reason) })),
		cel.Function("errored", decisionGetter("decision_errored", cel.BoolType, func(d decisionVal) ref.Val { return types.Bool(d.err != "") })),
		cel.Function("error", decisionGetter("decision_error", cel.StringType, func(d decisionVal) ref.Val { return types.String(d.err) })),
	}
}

func (authorizerLib) ProgramOptions() []cel.ProgramOption { return nil }

func str2(v ref.Val) string {
	s, _ := v.Value().(string)
	return s
}

func withAuthorizer(v ref.Val, f func(authorizerVal) ref.Val) ref.Val {
	z, ok := v.(authorizerVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	return f(z)
}

func resourceSetter(id string, set func(*resourceCheckVal, string)) cel.FunctionOpt {
	return cel.MemberOverload(id, []*cel.Type{ResourceCheckType, cel.StringType}, ResourceCheckType,
		cel.BinaryBinding(func(r, v ref.Val) ref.Val {
			rc, ok := r.(resourceCheckVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(r)
			}
			set(&rc, str2(v))
			return rc
		}))
}

func decisionGetter(id string, out *cel.Type, get func(decisionVal) ref.Val) cel.FunctionOpt {
	return cel.MemberOverload(id, []*cel.Type{DecisionType}, out,
		cel.UnaryBinding(func(v ref.Val) ref.Val {
			d, ok := v.(decisionVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return get(d)
		}))
}

// authorizerVal is the authorizer of one admission request.
type authorizerVal struct {
	ctx            context.Context
	authorize      AuthorizeFunc
	serviceAccount string
}

func (a authorizerVal) decide(r AuthzRequest) ref.Val {
	if a.authorize == nil {
		return decisionVal{err: "no authorizer is configured"}
	}
	r.ServiceAccount = a.serviceAccount
	allowed, reason, err := a.authorize(a.ctx, r)
	d := decisionVal{allowed: allowed && err == nil, reason: reason}
	if err != nil {
		d.err = err.Error()
	}
	return d
}

type pathCheckVal struct {
	authorizer authorizerVal
	path       string
}

type groupCheckVal struct {
	authorizer authorizerVal
	group      string
}

type resourceCheckVal struct {
	authorizer                                    authorizerVal
	group, resource, subresource, namespace, name string
}

type decisionVal struct {
	allowed bool
	reason  string
	err     string
}

// The ref.Val methods of the library's values: they are opaque, equal to
// themselves only.

func opaqueNative(v any, t reflect.Type) (any, error) {
	if reflect.TypeOf(v).AssignableTo(t) {
		return v, nil
	}
	return nil, fmt.Errorf("type conversion error to %v", t)
}

func opaqueConvert(v ref.Val, own *cel.Type, to ref.Type) ref.Val {
	switch {
	case to.TypeName() == own.TypeName():
		return v
	case to == types.TypeType:
		return own
	}
	return types.NewErr("type conversion error from '%s' to '%s'", own, to)
}

func (a authorizerVal) ConvertToNative(t reflect.Type) (any, error) { return opaqueNative(a, t) }
func (a authorizerVal) ConvertToType(t ref.Type) ref.Val            { return opaqueConvert(a, AuthorizerType, t) }
func (a authorizerVal) Equal(o ref.Val) ref.Val                     { return types.Bool(false) }
func (a authorizerVal) Type() ref.Type                              { return AuthorizerType }
func (a authorizerVal) Value() any                                  { return a }

func (p pathCheckVal) ConvertToNative(t reflect.Type) (any, error) { return opaqueNative(p, t) }
func (p pathCheckVal) ConvertToType(t ref.Type) ref.Val            { return opaqueConvert(p, PathCheckType, t) }
func (p pathCheckVal) Equal(o ref.Val) ref.Val                     { return types.Bool(false) }
func (p pathCheckVal) Type() ref.Type                              { return PathCheckType }
func (p pathCheckVal) Value() any                                  { return p }

func (g groupCheckVal) ConvertToNative(t reflect.Type) (any, error) { return opaqueNative(g, t) }
func (g groupCheckVal) ConvertToType(t ref.Type) ref.Val            { return opaqueConvert(g, GroupCheckType, t) }
func (g groupCheckVal) Equal(o ref.Val) ref.Val                     { return types.Bool(false) }
func (g groupCheckVal) Type() ref.Type                              { return GroupCheckType }
func (g groupCheckVal) Value() any                                  { return g }

func (r resourceCheckVal) ConvertToNative(t reflect.Type) (any, error) { return opaqueNative(r, t) }
func (r resourceCheckVal) ConvertToType(t ref.Type) ref.Val {
	return opaqueConvert(r, ResourceCheckType, t)
}
func (r resourceCheckVal) Equal(o ref.Val) ref.Val { return types.Bool(false) }
func (r resourceCheckVal) Type() ref.Type          { return ResourceCheckType }
func (r resourceCheckVal) Value() any              { return r }

func (d decisionVal) ConvertToNative(t reflect.Type) (any, error) { return opaqueNative(d, t) }
func (d decisionVal) ConvertToType(t ref.Type) ref.Val            { return opaqueConvert(d, DecisionType, t) }
func (d decisionVal) Equal(o ref.Val) ref.Val {
	od, ok := o.(decisionVal)
	return types.Bool(ok && od == d)
}
func (d decisionVal) Type() ref.Type { return DecisionType }
func (d decisionVal) Value() any     { return d }
