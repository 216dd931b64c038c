package openapi

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Spec holds the OpenAPI documents of the API server, built once by New and
// served as precomputed bytes. It is safe for concurrent use.
type Spec struct {
	// swagger is the v2 document Extend adds to.
	swagger   *spec.Swagger
	v2        document
	discovery document
	// v3 maps a group-version path ("api/v1", "apis/apps/v1") to its document.
	v3 map[string]document
}

// document is one served document in its encodings.
type document struct {
	json     []byte
	proto    []byte // nil for the v3 discovery document
	etag     string // upper-case hex SHA-512 of json, as upstream
	modified time.Time
}

// Option changes how New builds the documents.
type Option func(*options)

type options struct {
	version          string
	mediaTypes       []string
	streamMediaTypes []string
}

// WithVersion sets info.version of every document; upstream puts the server's
// git version there ("v1.32.4"). The default is "unversioned".
func WithVersion(version string) Option {
	return func(o *options) { o.version = version }
}

// WithMediaTypes sets the content types operations declare they produce:
// mediaTypes for objects, streamMediaTypes in addition for list and watch.
// The default is upstream's: application/json, application/yaml and
// application/vnd.kubernetes.protobuf, plus their ;stream=watch forms for
// JSON and protobuf.
func WithMediaTypes(mediaTypes, streamMediaTypes []string) Option {
	return func(o *options) {
		o.mediaTypes = append([]string(nil), mediaTypes...)
		o.streamMediaTypes = append([]string(nil), streamMediaTypes...)
	}
}

// New builds the OpenAPI v2 document of all resources and one OpenAPI v3
// document per group-version, with the definitions each of them reaches, and
// precomputes their JSON and protobuf encodings and hashes.
func New(resources []Resource, opts ...Option) (*Spec, error) {
	return build(nil, resources, opts)
}

// Extend returns a Spec that serves base's documents and those of more
// (custom resources), building only what more adds: the v3 documents of its
// group-versions, and its paths and definitions merged into base's v2
// document. more may not share a group-version with base.
func (s *Spec) Extend(more []Resource, opts ...Option) (*Spec, error) {
	return build(s, more, opts)
}

func build(base *Spec, resources []Resource, opts []Option) (*Spec, error) {
	o := options{
		version:          "unversioned",
		mediaTypes:       []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"},
		streamMediaTypes: []string{"application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch"},
	}
	for _, opt := range opts {
		opt(&o)
	}
	if err := validateResources(resources); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	t, err := newRegistry()
	if err != nil {
		return nil, err
	}
	t.addCustom(resources)
	getDefinitions := customDefinitions(resources)
	rb := &routeBuilder{registry: t, mediaTypes: o.mediaTypes, streamMediaTypes: o.streamMediaTypes}

	byGV := map[schema.GroupVersion][]Resource{}
	for _, r := range resources {
		byGV[r.groupVersion()] = append(byGV[r.groupVersion()], r)
	}
	gvs := make([]schema.GroupVersion, 0, len(byGV))
	for gv := range byGV {
		gvs = append(gvs, gv)
	}
	sort.Slice(gvs, func(i, j int) bool { return gvPath(gvs[i]) < gvPath(gvs[j]) })
	if base != nil {
		for _, gv := range gvs {
			if _, ok := base.v3[gvPath(gv)]; ok {
				return nil, fmt.Errorf("openapi: %s is already served", gv)
			}
		}
	}

	containers := make([]common.RouteContainer, 0, len(gvs))
	for _, gv := range gvs {
		c, err := rb.groupVersion(gv, byGV[gv])
		if err != nil {
			return nil, err
		}
		containers = append(containers, c)
	}

	now := time.Now()
	namer := newOperationNamer()
	s := &Spec{v3: make(map[string]document, len(gvs))}
	discovery := discoveryDocument{Paths: make(map[string]discoveryGroupVersion, len(gvs))}
	if base != nil {
		for p, doc := range base.v3 {
			s.v3[p] = doc
			discovery.Paths[p] = discoveryGroupVersion{ServerRelativeURL: serverRelativeURL(p, doc.etag)}
		}
	}

	s.swagger, err = buildSwagger(containers, v2Config(o, t, namer, getDefinitions), resources)
	if err != nil {
		return nil, err
	}
	if base != nil {
		s.swagger = mergeSwagger(base.swagger, s.swagger)
	}
	if s.v2, err = encodeV2(s.swagger, now); err != nil {
		return nil, err
	}
	for i, gv := range gvs {
		doc, err := buildV3(containers[i], v3Config(o, t, namer, getDefinitions), now)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", gv, err)
		}
		p := gvPath(gv)
		s.v3[p] = doc
		discovery.Paths[p] = discoveryGroupVersion{ServerRelativeURL: serverRelativeURL(p, doc.etag)}
	}
	discoveryJSON, err := json.Marshal(discovery)
	if err != nil {
		return nil, fmt.Errorf("openapi: encoding v3 discovery: %w", err)
	}
	s.discovery = document{json: discoveryJSON, etag: etag(discoveryJSON), modified: now}
	return s, nil
}

// GroupVersions returns the group-version paths with a v3 document, sorted.
func (s *Spec) GroupVersions() []string {
	out := make([]string, 0, len(s.v3))
	for p := range s.v3 {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// discoveryDocument is the body of /openapi/v3, as k8s.io/kube-openapi's
// handler3.OpenAPIV3Discovery.
type discoveryDocument struct {
	Paths map[string]discoveryGroupVersion `json:"paths"`
}

type discoveryGroupVersion struct {
	ServerRelativeURL string `json:"serverRelativeURL"`
}

func serverRelativeURL(gvPath, etag string) string {
	u := url.URL{Path: "/openapi/v3/" + gvPath, RawQuery: url.Values{"hash": {etag}}.Encode()}
	return u.String()
}

func etag(data []byte) string {
	return fmt.Sprintf("%X", sha512.Sum512(data))
}

const unauthorized = "Unauthorized"

// bearerToken is the security scheme upstream declares for bearer tokens.
func bearerToken() spec.SecuritySchemeProps {
	return spec.SecuritySchemeProps{
		Type:        "apiKey",
		Name:        "authorization",
		In:          "header",
		Description: "Bearer Token authentication",
	}
}

func v2Config(o options, t *registry, namer *operationNamer, defs common.GetOpenAPIDefinitions) *common.Config {
	return &common.Config{
		ProtocolList: []string{"https"},
		Info: &spec.Info{InfoProps: spec.InfoProps{
			Title:   "Kubernetes",
			Version: o.version,
		}},
		DefaultResponse: &spec.Response{ResponseProps: spec.ResponseProps{Description: "Default Response."}},
		CommonResponses: map[int]spec.Response{
			401: {ResponseProps: spec.ResponseProps{Description: unauthorized}},
		},
		GetDefinitions:                 defs,
		GetOperationIDAndTagsFromRoute: namer.idAndTags,
		GetDefinitionName:              t.definitionName,
		SecurityDefinitions: &spec.SecurityDefinitions{
			"BearerToken": &spec.SecurityScheme{SecuritySchemeProps: bearerToken()},
		},
		DefaultSecurity: []map[string][]string{{"BearerToken": {}}},
	}
}

func v3Config(o options, t *registry, namer *operationNamer, defs common.GetOpenAPIDefinitions) *common.OpenAPIV3Config {
	bearer := bearerToken()
	return &common.OpenAPIV3Config{
		Info: &spec.Info{InfoProps: spec.InfoProps{
			Title:   "Kubernetes",
			Version: o.version,
		}},
		DefaultResponse: &spec3.Response{ResponseProps: spec3.ResponseProps{Description: "Default Response."}},
		CommonResponses: map[int]*spec3.Response{
			401: {ResponseProps: spec3.ResponseProps{Description: unauthorized}},
		},
		GetDefinitions:                 defs,
		GetOperationIDAndTagsFromRoute: namer.idAndTags,
		GetDefinitionName:              t.definitionName,
		SecuritySchemes: spec3.SecuritySchemes{
			"BearerToken": &spec3.SecurityScheme{SecuritySchemeProps: spec3.SecuritySchemeProps{
				Type:        bearer.Type,
				Name:        bearer.Name,
				In:          bearer.In,
				Description: bearer.Description,
			}},
		},
	}
}

// buildSwagger builds the Swagger 2.0 document. As upstream, defaults are
// pruned from its definitions: v2 clients do not expect them beside $ref.
func buildSwagger(containers []common.RouteContainer, cfg *common.Config, resources []Resource) (*spec.Swagger, error) {
	sw, err := builder.BuildOpenAPISpecFromRoutes(containers, cfg)
	if err != nil {
		return nil, fmt.Errorf("openapi: building v2: %w", err)
	}
	if err := customV2(sw.Definitions, resources); err != nil {
		return nil, err
	}
	sw.Definitions = toSwagger2(pruneDefaults(sw.Definitions))
	return sw, nil
}

// mergeSwagger returns base with the paths and definitions of more added.
func mergeSwagger(base, more *spec.Swagger) *spec.Swagger {
	out := *base
	out.Paths = &spec.Paths{Paths: map[string]spec.PathItem{}}
	for _, sw := range []*spec.Swagger{base, more} {
		if sw.Paths == nil {
			continue
		}
		for p, item := range sw.Paths.Paths {
			out.Paths.Paths[p] = item
		}
	}
	out.Definitions = make(spec.Definitions, len(base.Definitions)+len(more.Definitions))
	for _, sw := range []*spec.Swagger{base, more} {
		for name, def := range sw.Definitions {
			out.Definitions[name] = def
		}
	}
	return &out
}

// encodeV2 encodes the Swagger 2.0 document as JSON and protobuf.
func encodeV2(sw *spec.Swagger, now time.Time) (document, error) {
	j, err := sw.MarshalJSON()
	if err != nil {
		return document{}, fmt.Errorf("openapi: encoding v2: %w", err)
	}
	parsed, err := openapiv2.ParseDocument(j)
	if err != nil {
		return document{}, fmt.Errorf("openapi: converting v2 to protobuf: %w", err)
	}
	pb, err := proto.Marshal(parsed)
	if err != nil {
		return document{}, fmt.Errorf("openapi: encoding v2 protobuf: %w", err)
	}
	return document{json: j, proto: pb, etag: etag(j), modified: now}, nil
}

// buildV3 builds the OpenAPI 3.0 document of one group-version.
func buildV3(c common.RouteContainer, cfg *common.OpenAPIV3Config, now time.Time) (document, error) {
	doc, err := builder3.BuildOpenAPISpecFromRoutes([]common.RouteContainer{c}, cfg)
	if err != nil {
		return document{}, fmt.Errorf("building v3: %w", err)
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return document{}, fmt.Errorf("encoding v3: %w", err)
	}
	parsed, err := openapiv3.ParseDocument(j)
	if err != nil {
		return document{}, fmt.Errorf("converting v3 to protobuf: %w", err)
	}
	pb, err := proto.Marshal(parsed)
	if err != nil {
		return document{}, fmt.Errorf("encoding v3 protobuf: %w", err)
	}
	return document{json: j, proto: pb, etag: etag(j), modified: now}, nil
}

// pruneDefaults returns the definitions without any default value, as
// upstream serves its v2 document: defaults next to a $ref are not valid
// Swagger 2.0, and v2 clients do not use them.
func pruneDefaults(defs spec.Definitions) spec.Definitions {
	w := &schemamutation.Walker{
		SchemaCallback: func(s *spec.Schema) *spec.Schema {
			if s.Default == nil {
				return s
			}
			pruned := *s
			pruned.Default = nil
			return &pruned
		},
		RefCallback: schemamutation.RefCallbackNoop,
	}
	out := make(spec.Definitions, len(defs))
	for name, def := range defs {
		out[name] = *w.WalkSchema(&def)
	}
	return out
}
