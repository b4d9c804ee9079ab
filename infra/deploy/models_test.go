package deploy

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/config"
)

// The Bedrock model ids are template parameters whose defaults are config's, and every function reads
// them from the environment config reads.
func TestModelParameters(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	env := at(tpl, "Globals", "Function", "Environment", "Variables")
	for _, tc := range []struct{ param, def, envVar string }{
		{"GenerationModelId", config.DefaultBedrockGenerationModel, "CSS_GENERATION_MODEL"},
		{"GradingModelId", config.DefaultBedrockGradingModel, "CSS_GRADING_MODEL"},
	} {
		p := at(tpl, "Parameters", tc.param)
		if p == nil {
			t.Errorf("no parameter %s", tc.param)
			continue
		}
		if got := str(at(p, "Default")); got != tc.def {
			t.Errorf("%s: default %q, config's is %q", tc.param, got, tc.def)
		}
		if pattern := str(at(p, "AllowedPattern")); !regexp.MustCompile(pattern).MatchString(tc.def) {
			t.Errorf("%s: AllowedPattern %q refuses the default", tc.param, pattern)
		}
		if !isRef(at(env, tc.envVar), tc.param) {
			t.Errorf("Globals.Function.Environment.Variables.%s: want !Ref %s", tc.envVar, tc.param)
		}
	}
}

// noValue is what AWS::NoValue evaluates to: an item of a list it is in disappears.
type noValue struct{}

// cfnEval resolves the intrinsic functions of a template value for given parameter values, as
// CloudFormation does: Ref (parameters, AWS::Partition, AWS::Region, AWS::AccountId, AWS::URLSuffix,
// AWS::NoValue), Fn::Sub, Fn::If (the chosen branch only), Fn::Join, Fn::Select, Fn::Split and the
// condition functions. Anything else fails the test.
type cfnEval struct {
	t      *testing.T
	tpl    map[string]any
	params map[string]string
}

func (e cfnEval) ref(name string) any {
	pseudo := map[string]string{"AWS::Partition": "aws", "AWS::Region": "eu-west-1", "AWS::AccountId": "123456789012",
		"AWS::URLSuffix": "amazonaws.com"}
	if v, ok := pseudo[name]; ok {
		return v
	}
	if name == "AWS::NoValue" {
		return noValue{}
	}
	if v, ok := e.params[name]; ok {
		return v
	}
	if p := at(e.tpl, "Parameters", name); p != nil {
		return str(at(p, "Default"))
	}
	e.t.Fatalf("Ref %s: not a parameter", name)
	return nil
}

func (e cfnEval) condition(name string) bool {
	c := at(e.tpl, "Conditions", name)
	if c == nil {
		e.t.Fatalf("no condition %s", name)
	}
	b, ok := e.eval(c).(bool)
	if !ok {
		e.t.Fatalf("condition %s is not a boolean", name)
	}
	return b
}

func (e cfnEval) eval(v any) any {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		out := []any{}
		for _, x := range c {
			if r := e.eval(x); r != (noValue{}) {
				out = append(out, r)
			}
		}
		return out
	case map[string]any:
		if len(c) != 1 {
			out := map[string]any{}
			for k, x := range c {
				out[k] = e.eval(x)
			}
			return out
		}
		for fn, arg := range c {
			args, _ := arg.([]any)
			switch fn {
			case "Ref":
				return e.ref(str(arg))
			case "Condition":
				return e.condition(str(arg))
			case "Fn::If":
				if e.condition(str(args[0])) {
					return e.eval(args[1])
				}
				return e.eval(args[2])
			case "Fn::Equals":
				return e.eval(args[0]) == e.eval(args[1])
			case "Fn::Not":
				return !e.eval(args[0]).(bool)
			case "Fn::Or", "Fn::And":
				some, all := false, true
				for _, a := range args {
					b := e.eval(a).(bool)
					some, all = some || b, all && b
				}
				return map[string]bool{"Fn::Or": some, "Fn::And": all}[fn]
			case "Fn::Join":
				var parts []string
				for _, p := range e.eval(args[1]).([]any) {
					parts = append(parts, p.(string))
				}
				return strings.Join(parts, e.eval(args[0]).(string))
			case "Fn::Split":
				var out []any
				for _, p := range strings.Split(e.eval(args[1]).(string), e.eval(args[0]).(string)) {
					out = append(out, p)
				}
				return out
			case "Fn::Select":
				var i int
				fmt.Sscan(e.eval(args[0]).(string), &i)
				list := e.eval(args[1]).([]any)
				if i < 0 || i >= len(list) {
					e.t.Fatalf("Fn::Select %d of %v: out of range (a stack error)", i, list)
				}
				return list[i]
			case "Fn::Sub":
				tmpl, vars := str(arg), map[string]any{}
				if args != nil {
					tmpl = str(args[0])
					for k, x := range args[1].(map[string]any) {
						vars[k] = e.eval(x)
					}
				}
				return regexp.MustCompile(`\$\{([^}]+)\}`).ReplaceAllStringFunc(tmpl, func(m string) string {
					name := m[2 : len(m)-1]
					if x, ok := vars[name]; ok {
						return x.(string)
					}
					return e.ref(name).(string)
				})
			}
			e.t.Fatalf("%s: not evaluated by this test", fn)
		}
	}
	e.t.Fatalf("cannot evaluate %#v", v)
	return nil
}

// bedrockResources is what each function may call bedrock:InvokeModel on, for the given parameters.
func bedrockResources(t *testing.T, tpl map[string]any, params map[string]string) map[string][]string {
	t.Helper()
	e := cfnEval{t: t, tpl: tpl, params: params}
	out := map[string][]string{}
	for id, fn := range functions(tpl) {
		for _, pol := range asList(at(fn, "Properties", "Policies")) {
			for _, st := range asList(at(pol, "Statement")) {
				actions := strs(at(st, "Action"))
				if !slices.ContainsFunc(actions, func(a string) bool { return strings.HasPrefix(a, "bedrock:") }) {
					continue
				}
				if len(actions) != 1 || actions[0] != "bedrock:InvokeModel" || str(at(st, "Effect")) != "Allow" || at(st, "Condition") != nil {
					t.Errorf("%s: bedrock statement %v", id, st)
				}
				for _, r := range e.eval(asList(at(st, "Resource"))).([]any) {
					out[id] = append(out[id], r.(string))
				}
			}
		}
	}
	for id := range out {
		slices.Sort(out[id])
	}
	return out
}

// InvokeModel is granted on the configured models only: an inference profile in the stack's region with its
// foundation model in every region (and, for a global profile, the region-less foundation-model ARN), a
// plain model id in the stack's region; the image model in its region. Only the generation worker and
// the research worker (the generation model alone) call Bedrock.
func TestBedrockGrantsAreTheConfiguredModels(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	const (
		profile = "arn:aws:bedrock:eu-west-1:123456789012:inference-profile/"
		inAny   = "arn:aws:bedrock:*::foundation-model/"
		global  = "arn:aws:bedrock:::foundation-model/"
		here    = "arn:aws:bedrock:eu-west-1::foundation-model/"
		image   = "arn:aws:bedrock:us-west-2::foundation-model/stability.stable-image-ultra-v1:1"
	)
	for _, tc := range []struct {
		name           string
		gen, grade     string
		worker, search []string
	}{
		{"the defaults: global profiles", "", "", []string{
			profile + "global.anthropic.claude-sonnet-4-6", inAny + "anthropic.claude-sonnet-4-6", global + "anthropic.claude-sonnet-4-6",
			profile + "global.anthropic.claude-haiku-4-5-20251001-v1:0", inAny + "anthropic.claude-haiku-4-5-20251001-v1:0",
			global + "anthropic.claude-haiku-4-5-20251001-v1:0", image,
		}, []string{
			profile + "global.anthropic.claude-sonnet-4-6", inAny + "anthropic.claude-sonnet-4-6", global + "anthropic.claude-sonnet-4-6",
		}},
		{"geographic profiles", "eu.anthropic.claude-sonnet-4-5-20250929-v1:0", "us-gov.anthropic.claude-3-haiku-20240307-v1:0", []string{
			profile + "eu.anthropic.claude-sonnet-4-5-20250929-v1:0", inAny + "anthropic.claude-sonnet-4-5-20250929-v1:0",
			profile + "us-gov.anthropic.claude-3-haiku-20240307-v1:0", inAny + "anthropic.claude-3-haiku-20240307-v1:0", image,
		}, []string{
			profile + "eu.anthropic.claude-sonnet-4-5-20250929-v1:0", inAny + "anthropic.claude-sonnet-4-5-20250929-v1:0",
		}},
		{"plain model ids", "anthropic.claude-3-5-sonnet-20240620-v1:0", "apac.amazon.nova-lite-v1:0", []string{
			here + "anthropic.claude-3-5-sonnet-20240620-v1:0",
			profile + "apac.amazon.nova-lite-v1:0", inAny + "amazon.nova-lite-v1:0", image,
		}, []string{here + "anthropic.claude-3-5-sonnet-20240620-v1:0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := map[string]string{}
			if tc.gen != "" {
				params["GenerationModelId"], params["GradingModelId"] = tc.gen, tc.grade
			}
			got := bedrockResources(t, tpl, params)
			slices.Sort(tc.worker)
			slices.Sort(tc.search)
			want := map[string][]string{"GenerationWorkerFunction": tc.worker, "ResearchWorkerFunction": tc.search}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("InvokeModel on\n%v\nwant\n%v", got, want)
			}
		})
	}

	// The ids the grants are derived from have that shape; anything else is refused at deploy.
	for _, param := range []string{"GenerationModelId", "GradingModelId"} {
		re := regexp.MustCompile(str(at(tpl, "Parameters", param, "AllowedPattern")))
		for id, ok := range map[string]bool{
			"global.anthropic.claude-sonnet-4-6": true, "us.anthropic.claude-3-7-sonnet-20250219-v1:0": true,
			"anthropic.claude-3-haiku-20240307-v1:0": true, "us-gov.anthropic.claude-3-haiku-20240307-v1:0": true,
			"amazon.nova-pro-v1:0": true, "jp.anthropic.claude-sonnet-4-5-20250929-v1:0": true,
			"arn:aws:bedrock:us-east-1:123456789012:inference-profile/global.anthropic.claude-sonnet-4-6": false,
			"global.anthropic.claude.sonnet": false, "claude": false, "": false,
			"global.anthropic.*": false, "anthropic.claude-3 haiku": false, "Global.anthropic.claude-x": false,
		} {
			if re.MatchString(id) != ok {
				t.Errorf("%s %q: accepted %v, want %v", param, id, !ok, ok)
			}
		}
	}
}
