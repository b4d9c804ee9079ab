package deploy

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/config"
)

// The images bucket (issue 8): private, encrypted, TLS only, its pictures expiring; the image model and its
// region as parameters whose defaults are the configuration's; the functions told all three.
func TestImagesBucket(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	b := at(tpl, "Resources", "ImagesBucket")
	if str(at(b, "Type")) != "AWS::S3::Bucket" {
		t.Fatal("no AWS::S3::Bucket named ImagesBucket")
	}
	p := at(b, "Properties")
	pab := at(p, "PublicAccessBlockConfiguration")
	rule := at(p, "LifecycleConfiguration", "Rules", "0")
	checks := []struct {
		what string
		ok   bool
	}{
		{"encryption at rest (SSE-S3)", str(at(p, "BucketEncryption", "ServerSideEncryptionConfiguration", "0",
			"ServerSideEncryptionByDefault", "SSEAlgorithm")) == "AES256"},
		{"every public access blocked", str(at(pab, "BlockPublicAcls")) == "true" && str(at(pab, "BlockPublicPolicy")) == "true" &&
			str(at(pab, "IgnorePublicAcls")) == "true" && str(at(pab, "RestrictPublicBuckets")) == "true"},
		{"ACLs disabled", str(at(p, "OwnershipControls", "Rules", "0", "ObjectOwnership")) == "BucketOwnerEnforced"},
		{"objects expire after ImageRetentionDays", str(at(rule, "Status")) == "Enabled" &&
			isRef(at(rule, "ExpirationInDays"), "ImageRetentionDays") && at(rule, "Prefix") == nil && at(rule, "Filter") == nil},
		{"retention defaults to 90 days", str(at(tpl, "Parameters", "ImageRetentionDays", "Default")) == "90"},
		{"no website, no public ACL", at(p, "WebsiteConfiguration") == nil && at(p, "AccessControl") == nil},
		{"kept on stack deletion", str(at(b, "DeletionPolicy")) == "Retain" && str(at(b, "UpdateReplacePolicy")) == "Retain"},
		{"output ImagesBucketName", isRef(at(tpl, "Outputs", "ImagesBucketName", "Value"), "ImagesBucket")},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("ImagesBucket: want %s", c.what)
		}
	}

	// The bucket policy denies every request that is not over TLS, on the bucket and its objects, and
	// allows nothing.
	var tlsOnly bool
	for id, r := range at(tpl, "Resources").(map[string]any) {
		if str(at(r, "Type")) != "AWS::S3::BucketPolicy" || !isRef(at(r, "Properties", "Bucket"), "ImagesBucket") {
			continue
		}
		for _, st := range asList(at(r, "Properties", "PolicyDocument", "Statement")) {
			if str(at(st, "Effect")) == "Allow" {
				t.Errorf("%s: allows %v", id, at(st, "Action"))
			}
			res := asList(at(st, "Resource"))
			if str(at(st, "Effect")) == "Deny" && str(at(st, "Principal")) == "*" && str(at(st, "Action")) == "s3:*" &&
				str(at(st, "Condition", "Bool", "aws:SecureTransport")) == "false" && len(res) == 2 &&
				isGetAtt(res[0], "ImagesBucket", "Arn") && str(at(res[1], "Fn::Sub")) == "${ImagesBucket.Arn}/*" {
				tlsOnly = true
			}
		}
	}
	if !tlsOnly {
		t.Error("no bucket policy of ImagesBucket denies requests without TLS on the bucket and its objects")
	}

	params := at(tpl, "Parameters")
	for _, tc := range []struct{ param, def string }{
		{"ImageModelId", config.DefaultImageModel},
		{"ImageModelRegion", config.DefaultImageRegion},
	} {
		p := at(params, tc.param)
		if got := str(at(p, "Default")); got != tc.def {
			t.Errorf("%s: default %q, want the configuration's %q", tc.param, got, tc.def)
		}
		if re, err := regexp.Compile(str(at(p, "AllowedPattern"))); err != nil || !re.MatchString(tc.def) {
			t.Errorf("%s: AllowedPattern %q refuses its default (%v)", tc.param, str(at(p, "AllowedPattern")), err)
		}
	}
	env := at(tpl, "Globals", "Function", "Environment", "Variables")
	for name, ref := range map[string]string{"CSS_IMAGE_MODEL": "ImageModelId", "CSS_IMAGE_REGION": "ImageModelRegion",
		"CSS_IMAGES_BUCKET": "ImagesBucket"} {
		if !isRef(at(env, name), ref) {
			t.Errorf("Globals.Function.Environment: want %s: !Ref %s", name, ref)
		}
	}
}

// s3Grants maps each function to the S3 actions its policies allow, each with the resources it is allowed
// on (as written in the template).
func s3Grants(tpl map[string]any) map[string]map[string][]any {
	out := map[string]map[string][]any{}
	for id, fn := range functions(tpl) {
		for _, pol := range asList(at(fn, "Properties", "Policies")) {
			for _, st := range asList(at(pol, "Statement")) {
				if str(at(st, "Effect")) != "Allow" {
					continue
				}
				for _, a := range strs(at(st, "Action")) {
					if !strings.HasPrefix(a, "s3:") {
						continue
					}
					if out[id] == nil {
						out[id] = map[string][]any{}
					}
					out[id][a] = append(out[id][a], asList(at(st, "Resource"))...)
				}
			}
		}
	}
	return out
}

// Pictures live at lasting URLs: the generation worker may only put them, the utility function (which
// serves /files/<key>) may only read them, both under images/ alone, and nobody else touches the bucket.
// The worker is told the API's public address, the HTTP API's own unless PublicUrl names another.
func TestImageGrantsAndPublicURL(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	want := map[string]string{"GenerationWorkerFunction": "s3:PutObject", "UtilityFunction": "s3:GetObject"}
	got := s3Grants(tpl)
	for fn, actions := range got {
		if len(actions) != 1 || want[fn] == "" || actions[want[fn]] == nil {
			t.Errorf("%s: S3 actions %v, want only %q", fn, slices.Collect(maps.Keys(actions)), want[fn])
		}
		for _, res := range actions[want[fn]] {
			if str(at(res, "Fn::Sub")) != "${ImagesBucket.Arn}/images/*" {
				t.Errorf("%s: %s on %v, want ${ImagesBucket.Arn}/images/*", fn, want[fn], res)
			}
		}
	}
	for fn := range want {
		if got[fn] == nil {
			t.Errorf("%s: no S3 grant", fn)
		}
	}

	pub := at(tpl, "Resources", "GenerationWorkerFunction", "Properties", "Environment", "Variables", "CSS_PUBLIC_URL", "Fn::If")
	if str(at(pub, "0")) != "HasPublicUrl" || !isRef(at(pub, "1"), "PublicUrl") ||
		str(at(pub, "2", "Fn::Sub")) != str(at(tpl, "Outputs", "ApiUrl", "Value", "Fn::Sub")) {
		t.Errorf("GenerationWorkerFunction CSS_PUBLIC_URL: %v, want !If [HasPublicUrl, !Ref PublicUrl, the ApiUrl output]", pub)
	}
	if c := at(tpl, "Conditions", "HasPublicUrl"); fmt.Sprint(c) != fmt.Sprint(map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{map[string]any{"Ref": "PublicUrl"}, ""}}}}) {
		t.Errorf("Conditions.HasPublicUrl: %v", c)
	}
	p := at(tpl, "Parameters", "PublicUrl")
	re, err := regexp.Compile(str(at(p, "AllowedPattern")))
	if err != nil || str(at(p, "Default")) != "" {
		t.Fatalf("PublicUrl: %v, %v", p, err)
	}
	for v, ok := range map[string]bool{
		"": true, "https://api.example.com": true, "https://api.example.com:8443": true, "https://example.com/css": true,
		"https://example.com/css/v2": true, "http://api.example.com": false, "https://api.example.com/": false,
		"https://api.example.com?x=1": false, "https://user@api.example.com": false, "api.example.com": false,
		"https://api.example.com/a b": false, "https://": false,
	} {
		if re.MatchString(v) != ok {
			t.Errorf("PublicUrl %q: accepted %v, want %v", v, !ok, ok)
		}
		if ok && v != "" { // what the template accepts, the worker's configuration takes as it is
			t.Setenv("CSS_PUBLIC_URL", v)
			if c, err := config.FromEnv(config.Development); err != nil || c.PublicURL != v {
				t.Errorf("CSS_PUBLIC_URL %q: the configuration says %q, %v", v, c.PublicURL, err)
			}
		}
	}
}
