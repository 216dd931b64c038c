package flagsfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// FlagName is the flag that names the file.
const FlagName = "flags-file"

// Install adds --flags-file to cmd's flags and, before cmd runs, sets every
// flag the file names that the command line did not set. The file is read
// once, after the command line is parsed and before PreRunE and RunE.
func Install(cmd *cobra.Command) {
	var path string
	cmd.Flags().StringVar(&path, FlagName, "", "A YAML file whose keys are this command's flag names (without dashes) and whose values are the flags' values; flags given on the command line win.")
	pre := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if path != "" {
			if err := Load(c.Flags(), path); err != nil {
				return err
			}
		}
		if pre != nil {
			return pre(c, args)
		}
		return nil
	}
}

// Load reads path and applies it to fs with Apply.
func Load(fs *pflag.FlagSet, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--%s: %w", FlagName, err)
	}
	if err := Apply(fs, data); err != nil {
		return fmt.Errorf("--%s %s: %w", FlagName, path, err)
	}
	return nil
}

// Apply sets the flags of fs that data, a YAML mapping from flag name to
// value, names and that were not already set on the command line. It checks
// the whole file before setting anything, so a bad file changes no flag.
func Apply(fs *pflag.FlagSet, data []byte) error {
	settings, err := parse(fs, data)
	if err != nil {
		return err
	}
	for _, s := range settings {
		if s.flag.Changed {
			continue // the command line wins
		}
		for _, v := range s.values {
			if err := fs.Set(s.flag.Name, v); err != nil {
				return fmt.Errorf("line %d: --%s: %w", s.line, s.flag.Name, err)
			}
		}
	}
	return nil
}

// setting is one key of the file: the flag and the values to Set it to, in
// order.
type setting struct {
	flag   *pflag.Flag
	values []string
	line   int
}

// parse turns data into settings, checking every key against fs and every
// value's shape; it sets nothing.
func parse(fs *pflag.FlagSet, data []byte) ([]setting, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil // only comments
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping from flag name to value", root.Line)
	}
	seen := map[string]int{}
	var out []setting
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		if key.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a key must be a flag name", key.Line)
		}
		name := key.Value
		if strings.HasPrefix(name, "-") {
			return nil, fmt.Errorf("line %d: key %q: write the flag name without dashes (%q)", key.Line, name, strings.TrimLeft(name, "-"))
		}
		if name == FlagName {
			return nil, fmt.Errorf("line %d: --%s cannot be set from the file itself", key.Line, FlagName)
		}
		f := fs.Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("line %d: unknown flag --%s", key.Line, name)
		}
		if first, ok := seen[name]; ok {
			return nil, fmt.Errorf("line %d: --%s is already set on line %d", key.Line, name, first)
		}
		seen[name] = key.Line
		values, err := values(val)
		if err != nil {
			return nil, fmt.Errorf("line %d: --%s: %w", val.Line, name, err)
		}
		out = append(out, setting{flag: f, values: values, line: key.Line})
	}
	return out, nil
}

// values returns the strings a node stands for: a scalar's text, a list's
// elements, or a mapping as k=v pairs joined by commas, sorted by key.
func values(n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, errors.New("no value (write \"\" for an empty string)")
		}
		return []string{n.Value}, nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, e := range n.Content {
			if e.Kind != yaml.ScalarNode || e.Tag == "!!null" {
				return nil, fmt.Errorf("line %d: a list element must be a value", e.Line)
			}
			out = append(out, e.Value)
		}
		if len(out) == 0 {
			return nil, errors.New("an empty list sets nothing: leave the key out, or write \"\"")
		}
		return out, nil
	case yaml.MappingNode:
		pairs := make([]string, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a mapping's keys and values must be values", k.Line)
			}
			pairs = append(pairs, k.Value+"="+v.Value)
		}
		sort.Strings(pairs)
		return []string{strings.Join(pairs, ",")}, nil
	case yaml.AliasNode:
		return values(n.Alias)
	default:
		return nil, fmt.Errorf("unsupported value")
	}
}
