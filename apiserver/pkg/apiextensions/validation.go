package apiextensions

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// printerColumnTypes are the types an additional printer column may have.
var printerColumnTypes = []string{"integer", "number", "string", "boolean", "date"}

// ValidateCRD checks a CustomResourceDefinition as upstream's
// ValidateCustomResourceDefinition does for apiextensions.k8s.io/v1.
func ValidateCRD(crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&crd.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if want := crd.Spec.Names.Plural + "." + crd.Spec.Group; crd.Name != want {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), crd.Name, `must be spec.names.plural+"."+spec.group`))
	}
	errs = append(errs, validateSpec(&crd.Spec, field.NewPath("spec"))...)
	errs = append(errs, validateStoredVersions(crd, field.NewPath("status", "storedVersions"))...)
	return errs
}

// ValidateCRDUpdate adds the rules of an update: the group never changes,
// and once the CRD is Established neither do its scope and kind.
func ValidateCRDUpdate(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	errs := ValidateCRD(crd)
	errs = append(errs, apivalidation.ValidateObjectMetaUpdate(&crd.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	spec := field.NewPath("spec")
	errs = append(errs, apivalidation.ValidateImmutableField(crd.Spec.Group, old.Spec.Group, spec.Child("group"))...)
	if IsEstablished(old) {
		errs = append(errs, apivalidation.ValidateImmutableField(crd.Spec.Scope, old.Spec.Scope, spec.Child("scope"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(crd.Spec.Names.Kind, old.Spec.Names.Kind, spec.Child("names", "kind"))...)
	}
	return errs
}

func validateSpec(spec *apiextensionsv1.CustomResourceDefinitionSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case spec.Group == "":
		errs = append(errs, field.Required(p.Child("group"), ""))
	case len(strings.Split(spec.Group, ".")) < 2:
		errs = append(errs, field.Invalid(p.Child("group"), spec.Group, "should be a domain with at least one dot"))
	default:
		for _, msg := range utilvalidation.IsDNS1123Subdomain(spec.Group) {
			errs = append(errs, field.Invalid(p.Child("group"), spec.Group, msg))
		}
	}
	switch spec.Scope {
	case apiextensionsv1.ClusterScoped, apiextensionsv1.NamespaceScoped:
	case "":
		errs = append(errs, field.Required(p.Child("scope"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("scope"), spec.Scope, []string{string(apiextensionsv1.ClusterScoped), string(apiextensionsv1.NamespaceScoped)}))
	}
	errs = append(errs, validateNames(&spec.Names, p.Child("names"))...)
	errs = append(errs, validateVersions(spec.Versions, p.Child("versions"))...)
	errs = append(errs, validateConversion(spec.Conversion, p.Child("conversion"))...)
	return errs
}

func validateNames(n *apiextensionsv1.CustomResourceDefinitionNames, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	label := func(child *field.Path, v string, required bool) {
		if v == "" {
			if required {
				errs = append(errs, field.Required(child, ""))
			}
			return
		}
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(child, v, msg))
		}
	}
	label(p.Child("plural"), n.Plural, true)
	label(p.Child("singular"), n.Singular, false)
	for i, s := range n.ShortNames {
		label(p.Child("shortNames").Index(i), s, true)
	}
	for i, c := range n.Categories {
		label(p.Child("categories").Index(i), c, true)
	}
	kind := func(child *field.Path, v string) {
		if v == "" {
			errs = append(errs, field.Required(child, ""))
			return
		}
		for _, msg := range utilvalidation.IsDNS1035Label(strings.ToLower(v)) {
			errs = append(errs, field.Invalid(child, v, msg))
		}
	}
	kind(p.Child("kind"), n.Kind)
	kind(p.Child("listKind"), n.ListKind)
	if n.Kind != "" && n.Kind == n.ListKind {
		errs = append(errs, field.Invalid(p.Child("listKind"), n.ListKind, "kind and listKind may not be the same"))
	}
	return errs
}

func validateVersions(versions []apiextensionsv1.CustomResourceDefinitionVersion, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(versions) == 0 {
		return append(errs, field.Invalid(p, versions, "must have exactly one version marked as storage version"))
	}
	storage, served := 0, 0
	seen := sets.New[string]()
	for i, v := range versions {
		vp := p.Index(i)
		if v.Storage {
			storage++
		}
		if v.Served {
			served++
		}
		if seen.Has(v.Name) {
			errs = append(errs, field.Invalid(p, versions, "must contain unique version names"))
		}
		seen.Insert(v.Name)
		if v.Name == "" {
			errs = append(errs, field.Required(vp.Child("name"), ""))
		} else {
			for _, msg := range utilvalidation.IsDNS1035Label(v.Name) {
				errs = append(errs, field.Invalid(vp.Child("name"), v.Name, msg))
			}
		}
		errs = append(errs, validateVersion(&v, vp)...)
	}
	if storage != 1 {
		errs = append(errs, field.Invalid(p, versions, "must have exactly one version marked as storage version"))
	}
	if served == 0 {
		errs = append(errs, field.Invalid(p, versions, "must have at least one version marked as served"))
	}
	return errs
}

func validateVersion(v *apiextensionsv1.CustomResourceDefinitionVersion, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	sp := p.Child("schema", "openAPIV3Schema")
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		errs = append(errs, field.Required(sp, "schemas are required"))
	} else {
		errs = append(errs, validateStructural(v.Schema.OpenAPIV3Schema, sp)...)
		_, ruleErrs := compileSchemaRules(v.Schema.OpenAPIV3Schema, sp)
		errs = append(errs, ruleErrs...)
	}
	if v.Subresources != nil && v.Subresources.Scale != nil {
		sc := v.Subresources.Scale
		scp := p.Child("subresources", "scale")
		if !strings.HasPrefix(sc.SpecReplicasPath, ".spec.") {
			errs = append(errs, field.Invalid(scp.Child("specReplicasPath"), sc.SpecReplicasPath, "should be a json path under .spec"))
		}
		if !strings.HasPrefix(sc.StatusReplicasPath, ".status.") {
			errs = append(errs, field.Invalid(scp.Child("statusReplicasPath"), sc.StatusReplicasPath, "should be a json path under .status"))
		}
		if sc.LabelSelectorPath != nil && !strings.HasPrefix(*sc.LabelSelectorPath, ".spec.") && !strings.HasPrefix(*sc.LabelSelectorPath, ".status.") {
			errs = append(errs, field.Invalid(scp.Child("labelSelectorPath"), *sc.LabelSelectorPath, "should be a json path under either .spec or .status"))
		}
	}
	errs = append(errs, validateSelectableFields(v, p.Child("selectableFields"))...)
	for i, c := range v.AdditionalPrinterColumns {
		cp := p.Child("additionalPrinterColumns").Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(cp.Child("name"), ""))
		}
		if c.Type == "" {
			errs = append(errs, field.Required(cp.Child("type"), fmt.Sprintf("must be one of %s", strings.Join(printerColumnTypes, ", "))))
		} else if !sets.New(printerColumnTypes...).Has(c.Type) {
			errs = append(errs, field.NotSupported(cp.Child("type"), c.Type, printerColumnTypes))
		}
		if c.JSONPath == "" {
			errs = append(errs, field.Required(cp.Child("jsonPath"), ""))
		} else if _, err := compileJSONPath(c.JSONPath); err != nil {
			errs = append(errs, field.Invalid(cp.Child("jsonPath"), c.JSONPath, fmt.Sprintf("must be a simple json path: %v", err)))
		}
	}
	return errs
}

// validateStructural checks that a schema is structural: every node has a
// type (unless it is int-or-string or preserves unknown fields), the root is
// an object, properties and additionalProperties exclude each other, and
// metadata at the root restricts at most name and generateName.
func validateStructural(s *apiextensionsv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case s.Type == "":
		errs = append(errs, field.Required(p.Child("type"), "must not be empty at the root"))
	case s.Type != "object":
		errs = append(errs, field.Invalid(p.Child("type"), s.Type, "must be object at the root"))
	}
	if m, ok := s.Properties["metadata"]; ok {
		mp := p.Child("properties").Key("metadata")
		if m.Type != "" && m.Type != "object" {
			errs = append(errs, field.Invalid(mp.Child("type"), m.Type, "must be object"))
		}
		for k := range m.Properties {
			if k != "name" && k != "generateName" {
				errs = append(errs, field.Forbidden(mp, "must not specify anything other than name and generateName, but metadata is implicitly specified"))
				break
			}
		}
	}
	return append(errs, validateNode(s, p, true)...)
}

func validateNode(s *apiextensionsv1.JSONSchemaProps, p *field.Path, root bool) field.ErrorList {
	var errs field.ErrorList
	preserve := s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
	if !root && s.Type == "" && !s.XIntOrString && !preserve {
		errs = append(errs, field.Required(p.Child("type"), "must not be empty for specified object fields"))
	}
	if s.XPreserveUnknownFields != nil && !*s.XPreserveUnknownFields {
		errs = append(errs, field.Invalid(p.Child("x-kubernetes-preserve-unknown-fields"), false, "must be true or undefined"))
	}
	if len(s.Properties) > 0 && s.AdditionalProperties != nil {
		errs = append(errs, field.Forbidden(p.Child("additionalProperties"), "additionalProperties and properties are mutual exclusive"))
	}
	if s.Type == "array" && (s.Items == nil || s.Items.Schema == nil) {
		errs = append(errs, field.Required(p.Child("items"), "must be specified"))
	}
	if s.Items != nil && len(s.Items.JSONSchemas) > 0 {
		errs = append(errs, field.Forbidden(p.Child("items"), "items must be a schema object and not an array"))
	}
	if s.XListType != nil {
		switch *s.XListType {
		case "atomic", "set":
		case "map":
			if len(s.XListMapKeys) == 0 {
				errs = append(errs, field.Required(p.Child("x-kubernetes-list-map-keys"), "must not be empty if x-kubernetes-list-type is map"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("x-kubernetes-list-type"), *s.XListType, []string{"atomic", "set", "map"}))
		}
	}
	if s.Default != nil {
		errs = append(errs, validateDefault(s, p.Child("default"))...)
	}
	for k, child := range s.Properties {
		errs = append(errs, validateNode(&child, p.Child("properties").Key(k), false)...)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		errs = append(errs, validateNode(s.AdditionalProperties.Schema, p.Child("additionalProperties"), false)...)
	}
	if s.Items != nil && s.Items.Schema != nil {
		errs = append(errs, validateNode(s.Items.Schema, p.Child("items"), false)...)
	}
	return errs
}

func validateStoredVersions(crd *apiextensionsv1.CustomResourceDefinition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	versions := sets.New[string]()
	for _, v := range crd.Spec.Versions {
		versions.Insert(v.Name)
	}
	for i, v := range crd.Status.StoredVersions {
		if !versions.Has(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, "must appear in spec.versions"))
		}
	}
	return errs
}

// validateDefault checks that a default validates against its own schema
// and holds no field the schema would prune, as upstream.
func validateDefault(s *apiextensionsv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	value, ok := decodeDefault(s.Default)
	if !ok {
		return field.ErrorList{field.Invalid(p, string(s.Default.Raw), "must be valid JSON")}
	}
	node := s.DeepCopy()
	node.Default = nil
	sch, err := NewSchema(node)
	if err != nil {
		return field.ErrorList{field.Invalid(p, value, err.Error())}
	}
	var errs field.ErrorList
	if obj, ok := value.(map[string]any); ok {
		pruned := map[string]any{"v": runtime.DeepCopyJSONValue(obj)}
		var paths []string
		pruneValue(pruned["v"], node, "", &paths)
		if len(paths) > 0 {
			errs = append(errs, field.Invalid(p, value, fmt.Sprintf("must not have unknown fields: %s", strings.Join(paths, ", "))))
		}
	}
	result := sch.validator.Validate(value)
	for _, e := range resultToFieldErrors(result) {
		errs = append(errs, field.Invalid(p, value, e.ErrorBody()))
	}
	return errs
}
