package library

import (
	"regexp"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
)

// Regex is the Kubernetes regular expression library (RE2 syntax, Go's
// regexp package).
//
//	<string>.find(<string>) <string>                   the first match; "" if none
//	<string>.findAll(<string>) <list<string>>          all matches
//	<string>.findAll(<string>, <int>) <list<string>>   at most n matches if n >= 0; all if n < 0
//
// An invalid pattern is an error: "Illegal regex: ...". When the pattern is
// a constant, it is compiled once when the program is built, and an invalid
// one makes building the program fail.
//
// Examples:
//
//	"abc 123".find('[0-9]+') // '123'
//	"123 abc 456".findAll('[0-9]+') // ['123', '456']
//	"123 abc 456".findAll('[0-9]+', 1) // ['123']
func Regex() cel.EnvOption {
	return cel.Lib(regexLib{})
}

type regexLib struct{}

// LibraryName makes the library a singleton: adding it twice is harmless.
func (regexLib) LibraryName() string { return "kubernetes.regex" }

// CompileOptions declares find and findAll.
func (regexLib) CompileOptions() []cel.EnvOption {
	return functionOptions(map[string][]cel.FunctionOpt{
		"find": {cel.MemberOverload("string_find_string", []*cel.Type{cel.StringType, cel.StringType},
			cel.StringType, cel.BinaryBinding(find))},
		"findAll": {
			cel.MemberOverload("string_find_all_string", []*cel.Type{cel.StringType, cel.StringType},
				cel.ListType(cel.StringType), cel.BinaryBinding(func(str, re ref.Val) ref.Val {
					return findAll(str, re, types.Int(-1))
				})),
			cel.MemberOverload("string_find_all_string_int",
				[]*cel.Type{cel.StringType, cel.StringType, cel.IntType},
				cel.ListType(cel.StringType), cel.FunctionBinding(findAll)),
		},
	})
}

// ProgramOptions compiles constant patterns once, at program creation.
func (regexLib) ProgramOptions() []cel.ProgramOption {
	return []cel.ProgramOption{cel.OptimizeRegex(
		constantRegex("find", func(re *regexp.Regexp, args []ref.Val) ref.Val {
			return findWith(re, args)
		}),
		constantRegex("findAll", func(re *regexp.Regexp, args []ref.Val) ref.Val {
			return findAllWith(re, args)
		}),
	)}
}

// constantRegex is the optimisation of function fn when its pattern (the
// second argument) is a constant: the pattern is compiled once and eval
// runs with it.
func constantRegex(fn string, eval func(*regexp.Regexp, []ref.Val) ref.Val) *interpreter.RegexOptimization {
	return &interpreter.RegexOptimization{
		Function:   fn,
		RegexIndex: 1,
		Factory: func(call interpreter.InterpretableCall, pattern string) (interpreter.InterpretableCall, error) {
			re, err := regexp.Compile(pattern)
			if err != nil {
				return nil, err
			}
			return interpreter.NewCall(call.ID(), call.Function(), call.OverloadID(), call.Args(),
				func(args ...ref.Val) ref.Val { return eval(re, args) }), nil
		},
	}
}

// compileArg compiles the pattern argument.
func compileArg(arg ref.Val) (*regexp.Regexp, ref.Val) {
	pattern, ok := arg.Value().(string)
	if !ok {
		return nil, types.MaybeNoSuchOverloadErr(arg)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, types.NewErr("Illegal regex: %v", err.Error())
	}
	return re, nil
}

func find(str, pattern ref.Val) ref.Val {
	re, errVal := compileArg(pattern)
	if errVal != nil {
		return errVal
	}
	return findWith(re, []ref.Val{str, pattern})
}

func findAll(args ...ref.Val) ref.Val {
	if len(args) < 2 || len(args) > 3 {
		return types.NoSuchOverloadErr()
	}
	re, errVal := compileArg(args[1])
	if errVal != nil {
		return errVal
	}
	return findAllWith(re, args)
}

// findWith evaluates find(str, pattern) with the pattern compiled.
func findWith(re *regexp.Regexp, args []ref.Val) ref.Val {
	if len(args) != 2 {
		return types.NoSuchOverloadErr()
	}
	str, ok := args[0].Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[0])
	}
	return types.String(re.FindString(str))
}

// findAllWith evaluates findAll(str, pattern[, n]) with the pattern
// compiled.
func findAllWith(re *regexp.Regexp, args []ref.Val) ref.Val {
	if len(args) < 2 || len(args) > 3 {
		return types.NoSuchOverloadErr()
	}
	str, ok := args[0].Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[0])
	}
	n := int64(-1)
	if len(args) == 3 {
		if n, ok = args[2].Value().(int64); !ok {
			return types.MaybeNoSuchOverloadErr(args[2])
		}
	}
	if n > int64(len(str))+1 {
		// There are at most len(str)+1 matches; this also keeps n within int.
		n = -1
	}
	return types.NewStringList(types.DefaultTypeAdapter, re.FindAllString(str, int(n)))
}
