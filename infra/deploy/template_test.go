package deploy

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/store/dynamo"
)

const (
	templatePath = "../../template.yaml"
	functionsDir = "../../functions"
)

// route is one HttpApi event of a function.
type route struct {
	function string // logical id, e.g. "VideosFunction"
	event    string // event name, e.g. "ListMyVideos"
	auth     any    // the event's Auth property, if any
}

// functionID is the logical id of the Lambda serving a group, or of functions/<name>: "videos" ->
// "VideosFunction", "webhook-dispatcher" -> "WebhookDispatcherFunction".
func functionID(group string) string {
	id := ""
	for _, w := range strings.Split(group, "-") {
		if w != "" {
			id += strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return id + "Function"
}

func functions(tpl map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range at(tpl, "Resources").(map[string]any) {
		if str(at(r, "Type")) == "AWS::Serverless::Function" {
			out[id] = r.(map[string]any)
		}
	}
	return out
}

// routes maps "METHOD path" to the HttpApi events routing it.
func routes(t *testing.T, tpl map[string]any) map[string][]route {
	t.Helper()
	out := map[string][]route{}
	for id, fn := range functions(tpl) {
		evs, _ := at(fn, "Properties", "Events").(map[string]any)
		for name, ev := range evs {
			if str(at(ev, "Type")) != "HttpApi" {
				continue
			}
			p := at(ev, "Properties")
			if !isRef(at(p, "ApiId"), "HttpApi") {
				t.Errorf("%s.%s: ApiId must be !Ref HttpApi", id, name)
			}
			key := strings.ToUpper(str(at(p, "Method"))) + " " + str(at(p, "Path"))
			out[key] = append(out[key], route{function: id, event: name, auth: at(p, "Auth")})
		}
	}
	return out
}

func loadContract(t *testing.T) *contract.Contract {
	t.Helper()
	c, err := contract.Load()
	if err != nil {
		t.Fatalf("load the OpenAPI contract: %v", err)
	}
	if len(c.Operations) == 0 {
		t.Fatal("the OpenAPI contract has no operations")
	}
	return c
}

func TestEveryOperationIsRoutedOnceByItsFunction(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	byRoute := routes(t, tpl)
	declared := map[string]bool{}
	for _, op := range loadContract(t).Operations {
		key := op.Method + " " + op.Path
		declared[key] = true
		rs := byRoute[key]
		if len(rs) != 1 {
			t.Errorf("%s (%s): routed by %d HttpApi events, want exactly 1: %v", op.ID, key, len(rs), rs)
			continue
		}
		r := rs[0]
		if want := functionID(op.Function); r.function != want {
			t.Errorf("%s (%s): routed to %s, want %s (x-css-function %s)", op.ID, key, r.function, want, op.Function)
		}
		if want := strings.ToUpper(op.ID[:1]) + op.ID[1:]; r.event != want {
			t.Errorf("%s (%s): event named %s, want %s", op.ID, key, r.event, want)
		}
		if r.auth != nil {
			t.Errorf("%s (%s): the route declares Auth %v; the function authenticates (x-css-credential %s)", op.ID, key, r.auth, op.Credential)
		}
	}
	// The MCP endpoint is JSON-RPC, not a REST operation: its routes belong to the mcp function alone.
	for _, method := range []string{"POST", "GET", "DELETE"} {
		key := method + " /mcp"
		if rs := byRoute[key]; len(rs) != 1 || rs[0].function != "McpFunction" {
			t.Errorf("%s: routed by %v, want the McpFunction alone", key, rs)
		}
		declared[key] = true
	}
	// The sign-in for /mcp (decision 55) is OAuth, not REST: its routes belong to the signin function alone.
	for _, key := range []string{"GET /.well-known/oauth-protected-resource", "GET /.well-known/oauth-protected-resource/mcp",
		"GET /.well-known/oauth-authorization-server", "GET /oauth/authorize", "POST /oauth/authorize", "POST /oauth/token",
		"POST /oauth/register", "POST /oauth/revoke"} {
		if rs := byRoute[key]; len(rs) != 1 || rs[0].function != "SigninFunction" || rs[0].auth != nil {
			t.Errorf("%s: routed by %v, want the SigninFunction alone, without Auth", key, rs)
		}
		declared[key] = true
	}
	// Generated pictures are served at /files/<key> by the utility function (shared/ai/s3images), without
	// a credential: not REST operations either.
	for _, method := range []string{"GET", "HEAD"} {
		key := method + " /files/{proxy+}"
		if rs := byRoute[key]; len(rs) != 1 || rs[0].function != "UtilityFunction" || rs[0].auth != nil {
			t.Errorf("%s: routed by %v, want the UtilityFunction alone, without Auth", key, rs)
		}
		declared[key] = true
	}
	for key, rs := range byRoute {
		if !declared[key] {
			t.Errorf("%s: routed by %v but absent from the OpenAPI document", key, rs)
		}
	}
}

// Each function authenticates its own requests (wire.Authenticator; each main's tests send its operations
// without a credential), so a request costs one Lambda invocation: an authorizer in front would add a
// second one, and API Gateway would answer its refusals in its own body instead of the Error shape.
func TestHttpApiHasNoAuthorizer(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	httpAPI := at(tpl, "Resources", "HttpApi")
	if str(at(httpAPI, "Type")) != "AWS::Serverless::HttpApi" {
		t.Fatal("no AWS::Serverless::HttpApi named HttpApi")
	}
	if a := at(httpAPI, "Properties", "Auth"); a != nil {
		t.Errorf("HttpApi declares Auth %v", a)
	}
	for id, r := range at(tpl, "Resources").(map[string]any) {
		if typ := str(at(r, "Type")); typ == "AWS::ApiGatewayV2::Authorizer" {
			t.Errorf("%s: an authorizer", id)
		}
	}
}

// The operator's basics (issue 7): route throttling on the stage, alarms to an SNS topic when one is given,
// tracing as a parameter.
func TestOperatorBasics(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	params := at(tpl, "Parameters")
	for _, p := range []string{"ThrottlingRateLimit", "ThrottlingBurstLimit", "AlarmTopicArn", "Tracing"} {
		if at(params, p) == nil {
			t.Errorf("no parameter %s", p)
		}
	}
	rs := at(tpl, "Resources", "HttpApi", "Properties", "DefaultRouteSettings")
	if !isRef(at(rs, "ThrottlingRateLimit"), "ThrottlingRateLimit") || !isRef(at(rs, "ThrottlingBurstLimit"), "ThrottlingBurstLimit") {
		t.Errorf("HttpApi.DefaultRouteSettings: want ThrottlingRateLimit and ThrottlingBurstLimit from their parameters, got %v", rs)
	}
	// The one route anyone may write through without a credential keeps to a throttle of its own.
	reg := at(tpl, "Resources", "HttpApi", "Properties", "RouteSettings", "POST /oauth/register")
	if rate, burst := at(reg, "ThrottlingRateLimit"), at(reg, "ThrottlingBurstLimit"); fmt.Sprint(rate) != "1" || fmt.Sprint(burst) != "10" {
		t.Errorf("HttpApi.RouteSettings[POST /oauth/register]: want 1 request a second, a burst of 10; got %v", reg)
	}
	if at(tpl, "Resources", "SigninFunction", "Properties", "Events", "OAuthRegister", "Properties", "Path") != "/oauth/register" {
		t.Error("the throttled route is not the signin function's OAuthRegister event")
	}
	if !isRef(at(tpl, "Globals", "Function", "Tracing"), "Tracing") {
		t.Errorf("Globals.Function.Tracing: want !Ref Tracing")
	}
	cond := at(tpl, "Conditions", "AlarmsEnabled")
	if fmt.Sprint(cond) != fmt.Sprint(map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{map[string]any{"Ref": "AlarmTopicArn"}, ""}}}}) {
		t.Errorf("Conditions.AlarmsEnabled: want !Not [!Equals [!Ref AlarmTopicArn, \"\"]], got %v", cond)
	}
	alarmed := map[string]map[string]bool{} // function -> metric
	for id, r := range at(tpl, "Resources").(map[string]any) {
		if str(at(r, "Type")) != "AWS::CloudWatch::Alarm" {
			continue
		}
		p := at(r, "Properties")
		if str(at(r, "Condition")) != "AlarmsEnabled" {
			t.Errorf("%s: want Condition AlarmsEnabled (no topic, no alarm)", id)
		}
		for _, list := range []string{"AlarmActions", "OKActions"} {
			if as := asList(at(p, list)); len(as) != 1 || !isRef(as[0], "AlarmTopicArn") {
				t.Errorf("%s: %s want [!Ref AlarmTopicArn], got %v", id, list, as)
			}
		}
		dims := asList(at(p, "Dimensions"))
		if str(at(p, "Namespace")) != "AWS/Lambda" || len(dims) != 1 || str(at(dims[0], "Name")) != "FunctionName" {
			continue
		}
		fn := str(at(dims[0], "Value", "Ref"))
		if alarmed[fn] == nil {
			alarmed[fn] = map[string]bool{}
		}
		alarmed[fn][str(at(p, "MetricName"))] = true
		if str(at(p, "Threshold")) != "1" || str(at(p, "ComparisonOperator")) != "GreaterThanOrEqualToThreshold" ||
			str(at(p, "Statistic")) != "Sum" || str(at(p, "TreatMissingData")) != "notBreaching" {
			t.Errorf("%s: want Sum >= 1 with missing data not breaching", id)
		}
	}
	for id := range functions(tpl) {
		for _, m := range []string{"Errors", "Throttles"} {
			if !alarmed[id][m] {
				t.Errorf("%s: no %s alarm", id, m)
			}
		}
	}
}

func TestEveryFunctionDirectoryHasATemplateFunction(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	entries, err := os.ReadDir(functionsDir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		// functions/local is the local stack's main, beside the functions but no Lambda.
		if _, err := os.Stat(filepath.Join(functionsDir, e.Name(), "main.go")); e.IsDir() && err == nil && e.Name() != "local" {
			dirs = append(dirs, functionID(e.Name()))
		}
	}
	var fns []string
	for id, fn := range functions(tpl) {
		fns = append(fns, id)
		// sam build runs `make build-<LogicalId>`, which builds functions/<lowercased name>.
		if str(at(fn, "Properties", "CodeUri")) != "." || str(at(fn, "Metadata", "BuildMethod")) != "makefile" {
			t.Errorf("%s: want CodeUri . and Metadata.BuildMethod makefile", id)
		}
	}
	// Folder names are kebab-case and logical ids follow from them exactly (the Makefile's rule):
	// functions/research-worker is ResearchWorkerFunction.
	sort.Strings(dirs)
	sort.Strings(fns)
	if d, f := dirs, fns; !slices.Equal(d, f) {
		t.Errorf("functions/*/main.go give %v, template.yaml declares %v", d, f)
	}

	// The Makefile builds a static linux/arm64 binary named bootstrap.
	g := at(tpl, "Globals", "Function")
	if str(at(g, "Runtime")) != "provided.al2023" || str(at(g, "Handler")) != "bootstrap" ||
		!slices.Equal(strs(at(g, "Architectures")), []string{"arm64"}) {
		t.Errorf("Globals.Function: want Runtime provided.al2023, Handler bootstrap, Architectures [arm64]")
	}
	env := at(g, "Environment", "Variables")
	if str(at(env, "CSS_MODE")) != "production" || !isRef(at(env, "CSS_TABLE_NAME"), "Table") {
		t.Errorf("Globals.Function.Environment: want CSS_MODE production and CSS_TABLE_NAME !Ref Table")
	}
}

func TestEveryFunctionHasALogGroup(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	logged := map[string]bool{}
	for id, r := range at(tpl, "Resources").(map[string]any) {
		if str(at(r, "Type")) != "AWS::Logs::LogGroup" {
			continue
		}
		name := str(at(r, "Properties", "LogGroupName", "Fn::Sub"))
		fn, ok := strings.CutPrefix(name, "/aws/lambda/")
		if !ok {
			continue
		}
		fn = strings.TrimSuffix(strings.TrimPrefix(fn, "${"), "}")
		logged[fn] = true
		if !isRef(at(r, "Properties", "RetentionInDays"), "LogRetentionDays") {
			t.Errorf("%s: RetentionInDays must be !Ref LogRetentionDays", id)
		}
	}
	for id := range functions(tpl) {
		if !logged[id] {
			t.Errorf("%s: no AWS::Logs::LogGroup named !Sub /aws/lambda/${%s}", id, id)
		}
	}
}

// The key and TTL attribute names are shared/store/dynamo's (attrPK, attrSK, attrTTL).
func TestTableMatchesTheStore(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	table := at(tpl, "Resources", "Table")
	if str(at(table, "Type")) != "AWS::DynamoDB::Table" {
		t.Fatal("no AWS::DynamoDB::Table named Table")
	}
	p := at(table, "Properties")
	keys := map[string]string{}
	for _, k := range at(p, "KeySchema").([]any) {
		keys[str(at(k, "KeyType"))] = str(at(k, "AttributeName"))
	}
	attrs := map[string]string{}
	for _, a := range at(p, "AttributeDefinitions").([]any) {
		attrs[str(at(a, "AttributeName"))] = str(at(a, "AttributeType"))
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"KeySchema PK HASH, SK RANGE", len(keys) == 2 && keys["HASH"] == "PK" && keys["RANGE"] == "SK"},
		{"AttributeDefinitions exactly PK S, SK S", len(attrs) == 2 && attrs["PK"] == "S" && attrs["SK"] == "S"},
		{"no secondary indexes", at(p, "GlobalSecondaryIndexes") == nil && at(p, "LocalSecondaryIndexes") == nil},
		{"TTL on ttl, enabled", str(at(p, "TimeToLiveSpecification", "AttributeName")) == "ttl" &&
			str(at(p, "TimeToLiveSpecification", "Enabled")) == "true"},
		{"BillingMode PAY_PER_REQUEST", str(at(p, "BillingMode")) == "PAY_PER_REQUEST"},
		{"point-in-time recovery", str(at(p, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled")) == "true"},
		{"DeletionPolicy and UpdateReplacePolicy Retain",
			str(at(table, "DeletionPolicy")) == "Retain" && str(at(table, "UpdateReplacePolicy")) == "Retain"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("Table: want %s", c.what)
		}
	}
}

// tableActions are the DynamoDB actions the store adapter's calls need. TransactWriteItems is authorized
// per item, by the actions of the items' operations.
func tableActions(t *testing.T) []string {
	t.Helper()
	perItem := []string{"PutItem", "DeleteItem", "UpdateItem", "ConditionCheckItem"}
	var out []string
	typ := reflect.TypeFor[dynamo.API]()
	for i := range typ.NumMethod() {
		if m := typ.Method(i).Name; m == "TransactWriteItems" {
			out = append(out, perItem...)
		} else {
			out = append(out, m)
		}
	}
	for i := range out {
		out[i] = "dynamodb:" + out[i]
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// Each function's grants are inline statements on the table, of actions the store adapter calls, each
// held to some partition-key prefixes by a dynamodb:LeadingKeys condition; which of them each function needs
// is checked by running its operations (TestGrantsCoverWhatTheFunctionsCall).
func TestPoliciesAreLeastPrivilege(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	adapter := tableActions(t)
	for id, stmts := range grants(t, tpl) {
		for _, g := range stmts {
			for a := range g.actions {
				if !slices.Contains(adapter, a) {
					t.Errorf("%s: granted %s, which the store adapter never calls", id, a)
				}
			}
			if len(g.leadingKeys) == 0 {
				t.Errorf("%s: statement %s grants %v on every partition; hold it to the key prefixes it uses (dynamodb:LeadingKeys)",
					id, g.sid, slices.Sorted(maps.Keys(g.actions)))
			}
			for _, p := range g.leadingKeys {
				prefix, wild := strings.CutSuffix(p, "#*")
				if strings.ContainsAny(prefix, "*?") || !wild && strings.Contains(p, "#") {
					t.Errorf("%s: statement %s: leading key %q is neither a key prefix (\"<PREFIX>#*\") nor a fixed key", id, g.sid, p)
				}
			}
		}
	}
}

// grant is one Allow statement of a function's policy on the table.
type grant struct {
	sid     string
	actions map[string]bool // "dynamodb:GetItem", ...
	// leadingKeys are the ForAllValues:StringLike patterns of dynamodb:LeadingKeys; nil: any partition.
	leadingKeys []string
}

// allows says whether the statement lets action touch every partition key of pks.
func (g grant) allows(action string, pks []string) bool {
	if !g.actions[action] {
		return false
	}
	if g.leadingKeys == nil {
		return true
	}
	for _, pk := range pks {
		if !slices.ContainsFunc(g.leadingKeys, func(p string) bool { return stringLike(p, pk) }) {
			return false
		}
	}
	return true
}

// stringLike is IAM's StringLike: * matches any run of characters, ? any one character.
func stringLike(pattern, s string) bool {
	if pattern == "" {
		return s == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if stringLike(pattern[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && stringLike(pattern[1:], s[1:])
	}
	return s != "" && s[0] == pattern[0] && stringLike(pattern[1:], s[1:])
}

// grants reads the Allow statements each function's inline policies make on the table, reporting any that
// is not least privilege (wildcards, Scan, NotAction, another resource, a managed policy, a condition other
// than ForAllValues:StringLike on dynamodb:LeadingKeys).
func grants(t *testing.T, tpl map[string]any) map[string][]grant {
	t.Helper()
	out := map[string][]grant{}
	for id, fn := range functions(tpl) {
		for i, pol := range asList(at(fn, "Properties", "Policies")) {
			stmts, ok := at(pol, "Statement").([]any)
			if !ok {
				// A managed policy name or a SAM policy template (DynamoDBCrudPolicy grants Scan): not allowed.
				t.Errorf("%s: Policies[%d] is not an inline policy document with a Statement list: %v", id, i, pol)
				continue
			}
			for j, st := range stmts {
				if str(at(st, "Effect")) != "Allow" {
					continue
				}
				g := grant{sid: fmt.Sprint(j), actions: map[string]bool{}}
				if sid := str(at(st, "Sid")); sid != "" {
					g.sid = sid
				}
				for _, a := range strs(at(st, "Action")) {
					if strings.Contains(a, "*") || strings.EqualFold(a, "dynamodb:Scan") {
						t.Errorf("%s: statement %s grants %q", id, g.sid, a)
					}
					if strings.HasPrefix(a, "dynamodb:") {
						g.actions[a] = true
						res := at(st, "Resource")
						if !isGetAtt(res, "Table", "Arn") {
							t.Errorf("%s: statement %s grants %s on %v, want !GetAtt Table.Arn", id, g.sid, a, res)
						}
					}
				}
				if at(st, "NotAction") != nil || at(st, "NotResource") != nil {
					t.Errorf("%s: statement %s uses NotAction/NotResource", id, g.sid)
				}
				if cond, ok := at(st, "Condition").(map[string]any); ok {
					like, _ := cond["ForAllValues:StringLike"].(map[string]any)
					if len(cond) != 1 || len(like) != 1 || like["dynamodb:LeadingKeys"] == nil {
						t.Errorf("%s: statement %s: the only condition understood is ForAllValues:StringLike on dynamodb:LeadingKeys, got %v", id, g.sid, cond)
					}
					g.leadingKeys = strs(like["dynamodb:LeadingKeys"])
				} else if at(st, "Condition") != nil {
					t.Errorf("%s: statement %s: Condition %v", id, g.sid, at(st, "Condition"))
				}
				if len(g.actions) > 0 {
					out[id] = append(out[id], g)
				}
			}
		}
	}
	return out
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

// The key-set URL is https only at deploy time too (the functions check again at start), and the session
// token settings reach every function with defaults the configuration accepts.
func TestSessionTokenParameters(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	pattern := str(at(tpl, "Parameters", "JwksUrl", "AllowedPattern"))
	re, err := regexp.Compile(pattern)
	if err != nil {
		t.Fatalf("JwksUrl.AllowedPattern %q: %v", pattern, err)
	}
	for url, ok := range map[string]bool{
		"": true, "https://idp.example/.well-known/jwks.json": true, "https://idp.example:8443/jwks": true,
		"http://idp.example/.well-known/jwks.json": false, "https://": false, "https:///jwks": false,
		"ftp://idp.example/jwks": false, " https://idp.example/jwks": false, "HTTPS://idp.example/jwks": false,
		"https://idp.example/jwks x": false, "//idp.example/jwks": false,
	} {
		if re.MatchString(url) != ok {
			t.Errorf("JwksUrl.AllowedPattern on %q: match %t, want %t", url, !ok, ok)
		}
	}
	env := at(tpl, "Globals", "Function", "Environment", "Variables")
	for name, param := range map[string]string{"CSS_JWKS_URL": "JwksUrl", "CSS_JWKS_MAX_STALE": "JwksMaxStale", "CSS_JWT_LEEWAY": "JwtLeeway"} {
		if !isRef(at(env, name), param) {
			t.Errorf("Globals.Function.Environment.%s: want !Ref %s", name, param)
		}
	}
	for param, want := range map[string]time.Duration{"JwksMaxStale": config.DefaultJWKSMaxStale, "JwtLeeway": config.DefaultJWTLeeway} {
		p := at(tpl, "Parameters", param)
		def := str(at(p, "Default"))
		if d, err := time.ParseDuration(def); err != nil || d != want {
			t.Errorf("%s: Default %q, want the configuration's default %v", param, def, want)
		}
		if re, err := regexp.Compile(str(at(p, "AllowedPattern"))); err != nil || !re.MatchString(def) {
			t.Errorf("%s: AllowedPattern refuses its own default: %v", param, err)
		}
	}
}

// Every function that authenticates counts the verifier's "key set too stale" error lines into one metric,
// which an alarm watches.
func TestJwksStaleIsAlarmed(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	c := loadContract(t)
	authenticates := map[string]bool{}
	for _, op := range c.Operations {
		if !op.Public {
			authenticates[functionID(op.Function)] = true
		}
	}
	filtered := map[string]bool{}
	for id, r := range at(tpl, "Resources").(map[string]any) {
		if str(at(r, "Type")) != "AWS::Logs::MetricFilter" {
			continue
		}
		p := at(r, "Properties")
		logGroup := str(at(p, "LogGroupName", "Ref"))
		fn, ok := strings.CutSuffix(logGroup, "LogGroup")
		if !ok || str(at(tpl, "Resources", logGroup, "Type")) != "AWS::Logs::LogGroup" {
			t.Errorf("%s: LogGroupName %v is not a function's log group", id, at(p, "LogGroupName"))
			continue
		}
		mt := asList(at(p, "MetricTransformations"))
		if want := `{ $.event = "` + auth.JWKSStaleEvent + `" }`; str(at(p, "FilterPattern")) != want || len(mt) != 1 ||
			str(at(mt[0], "MetricNamespace")) != "CSS" || str(at(mt[0], "MetricName")) != "JwksStale" || str(at(mt[0], "MetricValue")) != "1" {
			t.Errorf("%s: want FilterPattern %s counted as 1 into CSS/JwksStale", id, want)
			continue
		}
		filtered[fn] = true
	}
	for fn := range authenticates {
		if !filtered[fn] {
			t.Errorf("%s authenticates but its log group has no JwksStale metric filter", fn)
		}
	}
	alarm := at(tpl, "Resources", "JwksStaleAlarm")
	p := at(alarm, "Properties")
	if str(at(alarm, "Condition")) != "AlarmsEnabled" || str(at(p, "Namespace")) != "CSS" || str(at(p, "MetricName")) != "JwksStale" ||
		str(at(p, "Statistic")) != "Sum" || str(at(p, "Threshold")) != "1" || str(at(p, "ComparisonOperator")) != "GreaterThanOrEqualToThreshold" {
		t.Errorf("JwksStaleAlarm: want Sum of CSS/JwksStale >= 1, when alarms are enabled; got %v", alarm)
	}
}
