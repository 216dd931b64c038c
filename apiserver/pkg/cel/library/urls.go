package library

import (
	"net/url"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// URLs is the Kubernetes URL library.
//
//	url(<string>) <URL>           parses an absolute URI or an absolute path; error otherwise
//	isURL(<string>) <bool>        whether url() would succeed
//	<URL>.getScheme() <string>    "" if absent
//	<URL>.getHost() <string>      host and port; IPv6 addresses in brackets ("[::1]:80")
//	<URL>.getHostname() <string>  host without port; IPv6 addresses without brackets ("::1")
//	<URL>.getPort() <string>      "" if absent
//	<URL>.getEscapedPath() <string>  the path, URL-escaped ("/a%20b")
//	<URL>.getQuery() <map<string, list<string>>>  unescaped keys to all their values
//
// Examples:
//
//	url('https://example.com:80/').getHost() // 'example.com:80'
//	url('../relative-path') // error
//	isURL('/absolute-path') // true
//	url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() // {'k1': ['a'], 'k2': ['b', 'c']}
func URLs() cel.EnvOption {
	return cel.Lib(urlsLib{})
}

type urlsLib struct{}

// LibraryName makes the library a singleton: adding it twice is harmless.
func (urlsLib) LibraryName() string { return "kubernetes.urls" }

// CompileOptions declares the URL functions.
func (urlsLib) CompileOptions() []cel.EnvOption {
	return functionOptions(map[string][]cel.FunctionOpt{
		"url": {cel.Overload("string_to_url", []*cel.Type{cel.StringType}, URLType,
			cel.UnaryBinding(stringToURL))},
		"isURL": {cel.Overload("is_url_string", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(isURL))},
		"getScheme":      urlStringGetter("url_get_scheme", func(u *url.URL) string { return u.Scheme }),
		"getHost":        urlStringGetter("url_get_host", func(u *url.URL) string { return u.Host }),
		"getHostname":    urlStringGetter("url_get_hostname", (*url.URL).Hostname),
		"getPort":        urlStringGetter("url_get_port", (*url.URL).Port),
		"getEscapedPath": urlStringGetter("url_get_escaped_path", (*url.URL).EscapedPath),
		"getQuery": {cel.MemberOverload("url_get_query", []*cel.Type{URLType},
			cel.MapType(cel.StringType, cel.ListType(cel.StringType)),
			cel.UnaryBinding(getQuery))},
	})
}

// ProgramOptions returns nothing: the library needs no program option.
func (urlsLib) ProgramOptions() []cel.ProgramOption { return nil }

// urlStringGetter declares a URL method that returns a string.
func urlStringGetter(id string, get func(*url.URL) string) []cel.FunctionOpt {
	return []cel.FunctionOpt{cel.MemberOverload(id, []*cel.Type{URLType}, cel.StringType,
		cel.UnaryBinding(func(arg ref.Val) ref.Val {
			u, ok := arg.Value().(*url.URL)
			if !ok {
				return types.MaybeNoSuchOverloadErr(arg)
			}
			return types.String(get(u))
		}))}
}

// stringToURL parses a URL as Kubernetes does: url.ParseRequestURI decides
// whether the string is acceptable (an absolute URI or an absolute path, as
// for the OpenAPI "uri" format), and url.Parse builds the value, because
// ParseRequestURI keeps a fragment in the path or query.
func stringToURL(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	if _, err := url.ParseRequestURI(s); err != nil {
		return types.NewErr("URL parse error during conversion from string: %v", err)
	}
	u, err := url.Parse(s)
	if err != nil {
		return types.NewErr("URL parse error during conversion from string: %v", err)
	}
	return URLValue{URL: u}
}

func isURL(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	_, err := url.ParseRequestURI(s)
	return types.Bool(err == nil)
}

func getQuery(arg ref.Val) ref.Val {
	u, ok := arg.Value().(*url.URL)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	result := map[ref.Val]ref.Val{}
	for k, v := range u.Query() {
		result[types.String(k)] = types.NewStringList(types.DefaultTypeAdapter, v)
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, result)
}
