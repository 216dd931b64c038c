package library

import (
	"github.com/google/cel-go/cel"
)

// All returns every library of this package, in the order Kubernetes
// registers them: lists, regex, URLs, quantity, IP, CIDR and format.
// Format needs optional types: add cel.OptionalTypes() to the environment.
func All() []cel.EnvOption {
	return []cel.EnvOption{
		Lists(),
		Regex(),
		URLs(),
		Quantity(),
		IP(),
		CIDR(),
		Format(),
	}
}

// Libraries returns All as one option, to add where a list of options is
// written out: cel.NewEnv(cel.OptionalTypes(), ext.Strings(), library.Libraries()).
func Libraries() cel.EnvOption {
	return func(env *cel.Env) (*cel.Env, error) {
		var err error
		for _, opt := range All() {
			if env, err = opt(env); err != nil {
				return nil, err
			}
		}
		return env, nil
	}
}

// functionOptions turns a map of function name to overloads into the
// cel.Function options that declare them.
func functionOptions(decls map[string][]cel.FunctionOpt) []cel.EnvOption {
	opts := make([]cel.EnvOption, 0, len(decls))
	for name, overloads := range decls {
		opts = append(opts, cel.Function(name, overloads...))
	}
	return opts
}
