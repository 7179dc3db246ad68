package client

import (
	"fmt"
	"net/url"
	"strings"
)

// ParseModelURL splits a model's URL, SCHEME://HOST[:PORT][/PREFIX]/v2/models/NAME[/versions/VERSION] (a
// trailing slash allowed), into the target New takes (SCHEME://HOST[:PORT][/PREFIX]), the model's name and its
// version ("" when the URL names none). The scheme is http or https (REST) or grpc or grpcs (gRPC, where the
// path only names the model). Errors: a *ConfigError for any other form.
func ParseModelURL(s string) (target, model, version string, err error) {
	bad := func(why string) (string, string, string, error) {
		return "", "", "", &ConfigError{Field: "URL", Msg: fmt.Sprintf("%q: %s (want SCHEME://HOST:PORT/v2/models/NAME[/versions/VERSION])", s, why)}
	}
	u, perr := url.Parse(s)
	if perr != nil || u.Host == "" {
		return bad("not a URL with a host")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return bad("user information, query and fragment are not supported")
	}
	path := u.EscapedPath()
	i := strings.LastIndex(path, "/v2/models/")
	if i < 0 {
		return bad("the path does not name a model")
	}
	prefix, rest := path[:i], strings.TrimSuffix(path[i+len("/v2/models/"):], "/")
	parts := strings.Split(rest, "/")
	if len(parts) != 1 && (len(parts) != 3 || parts[1] != "versions") {
		return bad("the path after /v2/models/ must be NAME or NAME/versions/VERSION")
	}
	unescape := func(p string) (string, bool) {
		v, err := url.PathUnescape(p)
		return v, err == nil && v != ""
	}
	var ok bool
	if model, ok = unescape(parts[0]); !ok {
		return bad("the model's name is empty or badly escaped")
	}
	if len(parts) == 3 {
		if version, ok = unescape(parts[2]); !ok {
			return bad("the version is empty or badly escaped")
		}
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "http", "https", "grpc", "grpcs":
	default:
		return bad("the scheme must be http, https, grpc or grpcs")
	}
	if (scheme == "grpc" || scheme == "grpcs") && prefix != "" {
		return bad("a gRPC URL has no path before /v2/models/")
	}
	return scheme + "://" + u.Host + prefix, model, version, nil
}
