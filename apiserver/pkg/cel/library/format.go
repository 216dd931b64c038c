package library

import (
	"net/url"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// Format is the Kubernetes named format library. It needs optional types
// (cel.OptionalTypes()).
//
//	format.named(<string>) <optional<Format>>  the format of that name; optional.none() if unknown
//	format.<name>() <Format>                   each format by name, e.g. format.dns1123Label()
//	<Format>.validate(<string>) <optional<list<string>>>  optional.none() if valid, else the problems
//
// The names: dns1123Label, dns1123Subdomain, dns1035Label, qualifiedName,
// dns1123LabelPrefix, dns1123SubdomainPrefix, dns1035LabelPrefix,
// labelValue, uri, uuid, byte, date, datetime. The messages are those of
// Kubernetes' validation functions (k8s.io/apimachinery) and of the
// OpenAPI formats (k8s.io/kube-openapi strfmt).
//
// Examples:
//
//	format.dns1123Label().validate('my-name').hasValue() // false: valid
//	format.named('dns1123Label').value().validate('My_Name').value() // the problems
//	format.named('nope').hasValue() // false
func Format() cel.EnvOption {
	return cel.Lib(formatLib{})
}

type formatLib struct{}

// LibraryName makes the library a singleton: adding it twice is harmless.
func (formatLib) LibraryName() string { return "kubernetes.format" }

// CompileOptions declares format.named, one format.<name> function per
// format and validate.
func (formatLib) CompileOptions() []cel.EnvOption {
	formats := namedFormats()
	decls := map[string][]cel.FunctionOpt{
		"validate": {cel.MemberOverload("format-validate", []*cel.Type{FormatType, cel.StringType},
			cel.OptionalType(cel.ListType(cel.StringType)), cel.BinaryBinding(formatValidate))},
		"format.named": {cel.Overload("format-named", []*cel.Type{cel.StringType}, cel.OptionalType(FormatType),
			cel.UnaryBinding(func(arg ref.Val) ref.Val {
				name, ok := arg.Value().(string)
				if !ok {
					return types.MaybeNoSuchOverloadErr(arg)
				}
				f, ok := formats[name]
				if !ok {
					return types.OptionalNone
				}
				return types.OptionalOf(f)
			}))},
	}
	for name, f := range formats {
		fn := "format." + name
		decls[fn] = []cel.FunctionOpt{cel.Overload(fn, []*cel.Type{}, FormatType,
			cel.FunctionBinding(func(...ref.Val) ref.Val { return f }))}
	}
	return functionOptions(decls)
}

// ProgramOptions returns nothing: the library needs no program option.
func (formatLib) ProgramOptions() []cel.ProgramOption { return nil }

func formatValidate(arg, str ref.Val) ref.Val {
	f, ok := arg.Value().(FormatValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	s, ok := str.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(str)
	}
	problems := f.ValidateFunc(s)
	if len(problems) == 0 {
		return types.OptionalNone
	}
	return types.OptionalOf(types.NewStringList(types.DefaultTypeAdapter, problems))
}

// namedFormats returns the formats by the name CEL code uses for them. Name
// in each is the name Kubernetes gives the format. The regex sizes are
// Kubernetes' ones: for uri the length of govalidator.URL, for uuid of
// strfmt.UUIDPattern, for byte of govalidator.Base64, for date and datetime
// of strfmt.DateTimePattern.
func namedFormats() map[string]FormatValue {
	return map[string]FormatValue{
		"dns1123Label":           {"DNS1123Label", prefixed(apimachineryvalidation.NameIsDNSLabel, false), 30},
		"dns1123Subdomain":       {"DNS1123Subdomain", prefixed(apimachineryvalidation.NameIsDNSSubdomain, false), 60},
		"dns1035Label":           {"DNS1035Label", prefixed(apimachineryvalidation.NameIsDNS1035Label, false), 30},
		"qualifiedName":          {"QualifiedName", validation.IsQualifiedName, 60},
		"dns1123LabelPrefix":     {"DNS1123LabelPrefix", prefixed(apimachineryvalidation.NameIsDNSLabel, true), 30},
		"dns1123SubdomainPrefix": {"DNS1123SubdomainPrefix", prefixed(apimachineryvalidation.NameIsDNSSubdomain, true), 60},
		"dns1035LabelPrefix":     {"DNS1035LabelPrefix", prefixed(apimachineryvalidation.NameIsDNS1035Label, true), 30},
		"labelValue":             {"LabelValue", validation.IsValidLabelValue, 40},
		"uri":                    {"URI", validateURI, 1103},
		"uuid":                   {"uuid", openAPIFormat("uuid", "does not match the UUID format"), 70},
		"byte":                   {"byte", openAPIFormat("byte", "invalid base64"), 84},
		"date":                   {"date", openAPIFormat("date", "invalid date"), 71},
		"datetime":               {"datetime", openAPIFormat("datetime", "invalid datetime"), 71},
	}
}

// prefixed binds the prefix argument of a name validation function: with
// true, the string may be a generateName prefix (a trailing '-' is allowed).
func prefixed(f func(string, bool) []string, prefix bool) func(string) []string {
	return func(s string) []string { return f(s, prefix) }
}

// validateURI accepts what url() accepts, with url.ParseRequestURI's
// message as the problem.
func validateURI(s string) []string {
	if _, err := url.ParseRequestURI(s); err != nil {
		return []string{err.Error()}
	}
	return nil
}

// openAPIFormat validates a string against an OpenAPI format of the
// default strfmt registry, with one fixed message for a bad string.
func openAPIFormat(name, message string) func(string) []string {
	return func(s string) []string {
		if !strfmt.Default.Validates(name, s) {
			return []string{message}
		}
		return nil
	}
}
