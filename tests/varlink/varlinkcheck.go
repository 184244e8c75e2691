// varlinkcheck - perfmapd's control socket judged by the reference Varlink
// client and IDL parser (github.com/varlink/go, Debian's
// golang-github-varlink-go-dev), built offline by tests/integration/t_varlink.sh.
//
//	varlinkcheck -socket PATH -idl DIR -path FILE
//
// It parses the interface files of DIR with the reference parser, checks
// that the daemon serves them verbatim (GetInterfaceDescription) and says
// so in GetInfo, then calls every method of io.perfmap and checks every
// reply and every error against the interface definitions: no field that
// is not declared, every field that is not optional present, every value
// of its declared type.  Then the protocol: "parameters": null, the
// standard errors, oneway calls (no reply), pipelined calls (replies in
// call order, a streamed reply ending before the next call's), "more" and
// "continues".  Stop comes last.  Any failure: a line on stderr, exit 1.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/ioutil"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/varlink/go/varlink"
	"github.com/varlink/go/varlink/idl"
)

var (
	ifaces = map[string]*idl.IDL{} // by interface name, parsed from the repository's files
	files  = map[string]string{}   // their text
	ctx    context.Context
	addr   string
	nfail  int
	ncalls int
)

func fail(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", a...)
	nfail++
}

func note(format string, a ...interface{}) {
	fmt.Printf("-- "+format+"\n", a...)
}

// ---- the checker: a JSON value against an IDL type ----------------------

func alias(in *idl.IDL, name string) *idl.Type {
	for _, a := range in.Aliases {
		if a.Name == name {
			return a.Type
		}
	}
	return nil
}

func conforms(in *idl.IDL, t *idl.Type, v interface{}, where string) error {
	switch t.Kind {
	case idl.TypeMaybe:
		if v == nil {
			return nil
		}
		return conforms(in, t.ElementType, v, where)
	case idl.TypeAlias:
		a := alias(in, t.Alias)
		if a == nil {
			return fmt.Errorf("%s: type %s is not defined", where, t.Alias)
		}
		return conforms(in, a, v, where)
	}
	if v == nil {
		return fmt.Errorf("%s: null where the type is not optional", where)
	}
	switch t.Kind {
	case idl.TypeBool:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %v is not a bool", where, v)
		}
	case idl.TypeInt:
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Errorf("%s: %v is not an int", where, v)
		}
		if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
			return fmt.Errorf("%s: %v is not an int", where, v)
		}
	case idl.TypeFloat:
		if _, ok := v.(json.Number); !ok {
			return fmt.Errorf("%s: %v is not a float", where, v)
		}
	case idl.TypeString:
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: %v is not a string", where, v)
		}
	case idl.TypeObject:
		if _, ok := v.(map[string]interface{}); !ok {
			return fmt.Errorf("%s: not an object", where)
		}
	case idl.TypeArray:
		a, ok := v.([]interface{})
		if !ok {
			return fmt.Errorf("%s: not an array", where)
		}
		for i, e := range a {
			if err := conforms(in, t.ElementType, e, fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
	case idl.TypeMap:
		m, ok := v.(map[string]interface{})
		if !ok {
			return fmt.Errorf("%s: not a map", where)
		}
		for k, e := range m {
			if err := conforms(in, t.ElementType, e, where+"["+k+"]"); err != nil {
				return err
			}
		}
	case idl.TypeEnum:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: %v is not an enum string", where, v)
		}
		for _, f := range t.Fields {
			if f.Name == s {
				return nil
			}
		}
		return fmt.Errorf("%s: %q is not one of the enum's values", where, s)
	case idl.TypeStruct:
		m, ok := v.(map[string]interface{})
		if !ok {
			return fmt.Errorf("%s: not an object", where)
		}
		declared := map[string]bool{}
		for _, f := range t.Fields {
			declared[f.Name] = true
			e, present := m[f.Name]
			if !present {
				if f.Type.Kind != idl.TypeMaybe {
					return fmt.Errorf("%s.%s: missing", where, f.Name)
				}
				continue
			}
			if err := conforms(in, f.Type, e, where+"."+f.Name); err != nil {
				return err
			}
		}
		var extra []string
		for k := range m {
			if !declared[k] {
				extra = append(extra, k)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			return fmt.Errorf("%s: fields not in the interface: %s", where, strings.Join(extra, ", "))
		}
	default:
		return fmt.Errorf("%s: unknown type kind %d", where, t.Kind)
	}
	return nil
}

// The first type T names that IN does not define, or "".
func undefined(in *idl.IDL, t *idl.Type) string {
	if t == nil {
		return ""
	}
	switch t.Kind {
	case idl.TypeAlias:
		if alias(in, t.Alias) == nil {
			return t.Alias
		}
	case idl.TypeMaybe, idl.TypeArray, idl.TypeMap:
		return undefined(in, t.ElementType)
	case idl.TypeStruct:
		for _, f := range t.Fields {
			if n := undefined(in, f.Type); n != "" {
				return n
			}
		}
	}
	return ""
}

func decode(raw []byte) interface{} {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v interface{}
	if err := d.Decode(&v); err != nil {
		return err
	}
	return v
}

// params of a reply or an error, as the raw JSON the daemon sent ({} if none).
type raw struct{ v json.RawMessage }

func (r *raw) UnmarshalJSON(b []byte) error { r.v = append([]byte(nil), b...); return nil }

func method(full string) (*idl.IDL, *idl.Method) {
	dot := strings.LastIndex(full, ".")
	in := ifaces[full[:dot]]
	if in == nil {
		return nil, nil
	}
	for _, m := range in.Methods {
		if m.Name == full[dot+1:] {
			return in, m
		}
	}
	return in, nil
}

// An error must be declared (by io.perfmap or org.varlink.service) and its
// parameters must be of the declared type.
func checkError(call string, err error) string {
	var name string
	var params interface{}
	switch e := err.(type) {
	case *varlink.Error:
		name = e.Name
		if p, ok := e.Parameters.(*json.RawMessage); ok && p != nil {
			params = decode(*p)
		}
	case *varlink.InvalidParameter:
		name, params = "org.varlink.service.InvalidParameter", map[string]interface{}{"parameter": e.Parameter}
	case *varlink.MethodNotFound:
		name, params = "org.varlink.service.MethodNotFound", map[string]interface{}{"method": e.Method}
	case *varlink.MethodNotImplemented:
		name, params = "org.varlink.service.MethodNotImplemented", map[string]interface{}{"method": e.Method}
	case *varlink.InterfaceNotFound:
		name, params = "org.varlink.service.InterfaceNotFound", map[string]interface{}{"interface": e.Interface}
	default:
		fail("%s: not a Varlink error: %v", call, err)
		return ""
	}
	dot := strings.LastIndex(name, ".")
	in := ifaces[name[:dot]]
	if in == nil {
		fail("%s: error %s of an interface the daemon does not declare", call, name)
		return name
	}
	for _, e := range in.Errors {
		if e.Name == name[dot+1:] {
			if params == nil {
				params = map[string]interface{}{}
			}
			if cerr := conforms(in, e.Type, params, name); cerr != nil {
				fail("%s: %v", call, cerr)
			}
			return name
		}
	}
	fail("%s: error %s is not declared by %s", call, name, in.Name)
	return name
}

// ---- calls ---------------------------------------------------------------

func connect() *varlink.Connection {
	c, err := varlink.NewConnection(ctx, "unix:"+addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: connect %s: %v\n", addr, err)
		os.Exit(1)
	}
	return c
}

// receive one reply of CALL and check it against the method's output type.
func receive(call string, recv func(context.Context, interface{}) (uint64, error)) (map[string]interface{}, uint64, error) {
	var r raw
	flags, err := recv(ctx, &r)
	ncalls++
	if err != nil {
		return nil, flags, err
	}
	in, m := method(call)
	v := map[string]interface{}{}
	if len(r.v) > 0 {
		d, ok := decode(r.v).(map[string]interface{})
		if !ok {
			fail("%s: the reply's parameters are not an object", call)
			return nil, flags, nil
		}
		v = d
	}
	if m == nil {
		fail("%s: a reply for a method the interface does not declare", call)
	} else if cerr := conforms(in, m.Out, v, call); cerr != nil {
		fail("%v", cerr)
	}
	return v, flags, nil
}

// call CALL with PARAMS (nil: "parameters": null, as this client sends it)
// on C; every reply is checked; the last one is returned.
func callOn(c *varlink.Connection, call string, params interface{}, more bool) (map[string]interface{}, int, error) {
	var flags uint64
	if more {
		flags = varlink.More
	}
	var p interface{} = &params // as Connection.Call does: null when PARAMS is nil
	recv, err := c.Send(ctx, call, p, flags)
	if err != nil {
		return nil, 0, err
	}
	n := 0
	for {
		v, f, err := receive(call, recv)
		n++
		if err != nil {
			return nil, n, err
		}
		if f&varlink.Continues == 0 {
			return v, n, nil
		}
		if !more {
			fail("%s: a continuing reply to a call without more", call)
		}
	}
}

func mustCall(c *varlink.Connection, call string, params interface{}) map[string]interface{} {
	v, _, err := callOn(c, call, params, false)
	if err != nil {
		checkError(call, err)
		fail("%s: %v", call, err)
		return map[string]interface{}{}
	}
	return v
}

func wantError(c *varlink.Connection, call string, params interface{}, want, field, value string) {
	_, _, err := callOn(c, call, params, false)
	if err == nil {
		fail("%s %v: answered, %s expected", call, params, want)
		return
	}
	got := checkError(call, err)
	if got != want {
		fail("%s %v: %s, %s expected (%v)", call, params, got, want, err)
		return
	}
	if field == "" {
		return
	}
	var have string
	switch e := err.(type) {
	case *varlink.InvalidParameter:
		have = e.Parameter
	case *varlink.MethodNotFound:
		have = e.Method
	case *varlink.MethodNotImplemented:
		have = e.Method
	case *varlink.InterfaceNotFound:
		have = e.Interface
	}
	if have != value {
		fail("%s %v: %s names %s %q, %q expected", call, params, want, field, have, value)
	}
}

func str(v map[string]interface{}, k string) string {
	s, _ := v[k].(string)
	return s
}

// A value of the wrong type for T.
func wrongValue(in *idl.IDL, t *idl.Type) interface{} {
	for t.Kind == idl.TypeMaybe {
		t = t.ElementType
	}
	switch t.Kind {
	case idl.TypeString, idl.TypeEnum:
		return 42
	default:
		return "not the right type"
	}
}

// A value of type T, for the required parameters of a wrong-type probe.
func someValue(t *idl.Type) interface{} {
	switch t.Kind {
	case idl.TypeString:
		return "/nonexistent/varlinkcheck"
	case idl.TypeInt:
		return 0
	case idl.TypeBool:
		return false
	case idl.TypeArray:
		return []interface{}{}
	}
	return map[string]interface{}{}
}

// ---- the checks ------------------------------------------------------------

func checkInterfaces(c *varlink.Connection) {
	var vendor, product, version, url string
	var names []string
	// the reference client sends "parameters": null for GetInfo
	if err := c.GetInfo(ctx, &vendor, &product, &version, &url, &names); err != nil {
		fail("GetInfo: %v", err)
		return
	}
	ncalls++
	if vendor == "" || product == "" || version == "" || url == "" {
		fail("GetInfo: vendor %q product %q version %q url %q: none may be empty", vendor, product, version, url)
	}
	want := []string{}
	for n := range files {
		want = append(want, n)
	}
	sort.Strings(want)
	got := append([]string(nil), names...)
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		fail("GetInfo: interfaces %v, the repository defines %v", names, want)
	}
	note("GetInfo: %s %s %s (%s), interfaces %v", vendor, product, version, url, names)
	for _, n := range names {
		desc, err := c.GetInterfaceDescription(ctx, n)
		ncalls++
		if err != nil {
			fail("GetInterfaceDescription %s: %v", n, err)
			continue
		}
		if desc != files[n] {
			fail("GetInterfaceDescription %s: not the repository's file verbatim (%d bytes, file %d)", n, len(desc), len(files[n]))
		}
		parsed, err := idl.New(desc)
		if err != nil {
			fail("GetInterfaceDescription %s: the reference parser refuses it: %v", n, err)
		} else if parsed.Name != n {
			fail("GetInterfaceDescription %s: describes %s", n, parsed.Name)
		}
		note("GetInterfaceDescription %s: %d bytes, verbatim, parsed: %d methods, %d types, %d errors",
			n, len(desc), len(parsed.Methods), len(parsed.Aliases), len(parsed.Errors))
	}
	wantError(c, "org.varlink.service.GetInterfaceDescription", map[string]interface{}{"interface": "com.example.nothing"},
		"org.varlink.service.InterfaceNotFound", "interface", "com.example.nothing")
	wantError(c, "org.varlink.service.GetInterfaceDescription", map[string]interface{}{},
		"org.varlink.service.InvalidParameter", "parameter", "interface")
}

// The reference client turns the standard errors into structs and drops
// what else they carry: these go over a plain socket, to see every field.
func checkRawErrors() {
	conn, err := net.Dial("unix", addr)
	if err != nil {
		fail("dial: %v", err)
		return
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for _, tc := range []struct{ msg, want string }{
		{`{"method":"io.perfmap.Nope"}`, "org.varlink.service.MethodNotFound"},
		{`{"method":"com.example.Nope"}`, "org.varlink.service.InterfaceNotFound"},
		{`{"method":"io.perfmap.Ping","upgrade":true}`, "org.varlink.service.MethodNotImplemented"},
		// a method that does not exist is not found, upgrade or not
		{`{"method":"io.perfmap.Nope","upgrade":true}`, "org.varlink.service.MethodNotFound"},
		// a method that needs "more" says so in the standard error
		{`{"method":"io.perfmap.Snapshot","parameters":{"store":true}}`, "org.varlink.service.ExpectedMore"},
		{`{"method":"io.perfmap.Ping","parameters":{"x":1}}`, "org.varlink.service.InvalidParameter"},
		{`{"method":"io.perfmap.Store","parameters":{"since":"not a time"}}`, "org.varlink.service.InvalidParameter"},
		// a value the profile's own check refuses (before, with a "message" beside "parameter")
		{`{"method":"io.perfmap.Profile","parameters":{"format":"x"}}`, "org.varlink.service.InvalidParameter"},
		{`{"method":"io.perfmap.Lookup","parameters":{"path":"/nonexistent/varlinkcheck"}}`, "io.perfmap.NotFound"},
	} {
		conn.Write(append([]byte(tc.msg), 0))
		b, err := r.ReadBytes(0)
		ncalls++
		if err != nil {
			fail("%s: %v", tc.msg, err)
			return
		}
		var m struct {
			Error      string          `json:"error"`
			Parameters json.RawMessage `json:"parameters"`
			Continues  bool            `json:"continues"`
		}
		if err := json.Unmarshal(b[:len(b)-1], &m); err != nil || m.Error != tc.want {
			fail("%s: %s, %s expected", tc.msg, b[:len(b)-1], tc.want)
			continue
		}
		name := m.Error[strings.LastIndex(m.Error, ".")+1:]
		in := ifaces[m.Error[:strings.LastIndex(m.Error, ".")]]
		declared := false
		for _, e := range in.Errors {
			if e.Name == name {
				declared = true
				if cerr := conforms(in, e.Type, decode(m.Parameters), m.Error); cerr != nil {
					fail("%s: %v", tc.msg, cerr)
				}
			}
		}
		if !declared {
			fail("%s: %s is not declared by its interface's description", tc.msg, m.Error)
		}
	}
	note("standard errors are declared, and carry exactly their declared parameters")
}

func checkStandardErrors(c *varlink.Connection) {
	wantError(c, "io.perfmap.NoSuchMethod", nil, "org.varlink.service.MethodNotFound", "method", "io.perfmap.NoSuchMethod")
	wantError(c, "org.varlink.service.NoSuchMethod", nil, "org.varlink.service.MethodNotFound", "method", "org.varlink.service.NoSuchMethod")
	wantError(c, "com.example.Nothing.Call", nil, "org.varlink.service.InterfaceNotFound", "interface", "com.example.Nothing")
	// no method of perfmapd upgrades the connection to another protocol
	up, err := c.Upgrade(ctx, "io.perfmap.Ping", nil)
	if err == nil {
		var r raw
		_, _, err = up(ctx, &r)
	}
	ncalls++
	if err == nil {
		fail("Ping with upgrade: answered, MethodNotImplemented expected")
	} else if e, ok := err.(*varlink.MethodNotImplemented); !ok || e.Method != "io.perfmap.Ping" {
		fail("Ping with upgrade: %v, MethodNotImplemented(io.perfmap.Ping) expected", err)
	}
	note("standard errors: MethodNotFound, InterfaceNotFound, MethodNotImplemented (upgrade)")
}

// Every parameter of every method: unknown names and wrong types are InvalidParameter.
func checkParameters(c *varlink.Connection) {
	in := ifaces["io.perfmap"]
	n := 0
	for _, m := range in.Methods {
		call := "io.perfmap." + m.Name
		base := map[string]interface{}{}
		for _, f := range m.In.Fields {
			if f.Type.Kind != idl.TypeMaybe {
				base[f.Name] = someValue(f.Type)
			}
		}
		p := map[string]interface{}{"no_such_parameter": 1}
		for k, v := range base {
			p[k] = v
		}
		wantError(c, call, p, "org.varlink.service.InvalidParameter", "parameter", "no_such_parameter")
		for _, f := range m.In.Fields {
			p := map[string]interface{}{}
			for k, v := range base {
				p[k] = v
			}
			p[f.Name] = wrongValue(in, f.Type)
			wantError(c, call, p, "org.varlink.service.InvalidParameter", "parameter", f.Name)
			n++
		}
	}
	note("InvalidParameter: an unknown parameter of each of %d methods, a wrong type for each of %d parameters",
		len(in.Methods), n)
}

func checkMethods(c *varlink.Connection, path string) (segment string) {
	done := map[string]bool{}
	snap := mustCall(c, "io.perfmap.Snapshot", map[string]interface{}{})
	mustCall(c, "io.perfmap.Ping", nil)
	done["Ping"] = true
	st := mustCall(c, "io.perfmap.Status", nil)
	done["Status"] = true
	done["Snapshot"] = true
	segment = filepath.Base(str(snap, "path"))
	if !strings.HasSuffix(segment, ".data") {
		fail("Snapshot: path %q is not a segment", str(snap, "path"))
	}
	segs := mustCall(c, "io.perfmap.Segments", map[string]interface{}{})
	mustCall(c, "io.perfmap.Segments", map[string]interface{}{"all": true})
	mustCall(c, "io.perfmap.Segments", map[string]interface{}{"segment": segment})
	done["Segments"] = true
	if list, ok := segs["segments"].([]interface{}); !ok || len(list) == 0 {
		fail("Segments: no segment listed")
	}
	mustCall(c, "io.perfmap.Lookup", map[string]interface{}{"path": path})
	mustCall(c, "io.perfmap.Lookup", map[string]interface{}{"path": path, "at_ns": time.Now().UnixNano()})
	done["Lookup"] = true
	h := mustCall(c, "io.perfmap.History", map[string]interface{}{"path": path})
	done["History"] = true
	id := ""
	if objs, ok := h["objects"].([]interface{}); ok && len(objs) > 0 {
		id, _ = objs[0].(map[string]interface{})["build_id"].(string)
	}
	if id == "" {
		fail("History %s: no build-id", path)
	} else {
		mustCall(c, "io.perfmap.BuildId", map[string]interface{}{"build_id": id})
		mustCall(c, "io.perfmap.BuildId", map[string]interface{}{"build_id": id[:8]})
	}
	done["BuildId"] = true
	wantError(c, "io.perfmap.History", map[string]interface{}{"path": "/nonexistent/varlinkcheck"}, "io.perfmap.NotFound", "", "")
	wantError(c, "io.perfmap.Store", map[string]interface{}{"segments": []string{"../../etc/passwd"}}, "io.perfmap.NoSuchSegment", "", "")
	// store and export, each without and with more
	sum := mustCall(c, "io.perfmap.Store", map[string]interface{}{"segments": []string{segment}})
	if _, ok := sum["results"].([]interface{}); !ok {
		fail("Store without more: no results in the summary")
	}
	v, n, err := callOn(c, "io.perfmap.Store", map[string]interface{}{"segments": []string{segment}}, true)
	if err != nil {
		fail("Store with more: %v", err)
	} else if v["ok"] == nil || n < 2 {
		fail("Store with more: %d replies, the last %v", n, v)
	}
	note("Store with more: %d replies (continues), then the summary", n)
	done["Store"] = true
	mustCall(c, "io.perfmap.Export", map[string]interface{}{"segments": []string{segment}, "name": "x.tar"})
	if _, _, err := callOn(c, "io.perfmap.Export", map[string]interface{}{"segments": []string{segment}, "name": "x.tar"}, true); err != nil {
		fail("Export with more: %v", err)
	}
	done["Export"] = true
	now := time.Now().UnixNano()
	mustCall(c, "io.perfmap.Profile", map[string]interface{}{"since_ns": now - int64(time.Hour),
		"until_ns": now, "format": "pprof"})
	mustCall(c, "io.perfmap.Profile", map[string]interface{}{"since_ns": now - int64(time.Hour),
		"until_ns": now, "format": "folded", "comm": "pm-spin"})
	done["Profile"] = true
	mustCall(c, "io.perfmap.Reload", nil)
	done["Reload"] = true
	done["Stop"] = true // last, in main
	for _, m := range ifaces["io.perfmap"].Methods {
		if !done[m.Name] {
			fail("io.perfmap.%s: declared, not called by this test", m.Name)
		}
	}
	note("every io.perfmap method called, every reply as declared (status: pid %v)", st["pid"])
	return segment
}

// counters.segments_closed of a Status reply (-1 if absent).
func segmentsClosed(st map[string]interface{}) int {
	c, _ := st["counters"].(map[string]interface{})
	n, err := strconv.Atoi(fmt.Sprint(c["segments_closed"]))
	if err != nil {
		return -1
	}
	return n
}

// oneway: no reply, but the call runs; the next call's reply comes first.
// (Parameters are given as {} here: null is checked elsewhere.)
func checkOneway(segment string) {
	c := connect()
	defer c.Close()
	none := map[string]interface{}{}
	c1 := segmentsClosed(mustCall(c, "io.perfmap.Status", none))
	if _, err := c.Send(ctx, "io.perfmap.Snapshot", none, varlink.Oneway); err != nil {
		fail("Snapshot oneway: %v", err)
	}
	if _, err := c.Send(ctx, "io.perfmap.Nope", none, varlink.Oneway); err != nil {
		fail("oneway to an unknown method: %v", err)
	}
	v := mustCall(c, "io.perfmap.Ping", none)
	if v["pong"] != true {
		fail("oneway: the reply after two oneway calls is not Ping's: %v", v)
	}
	c2 := segmentsClosed(mustCall(c, "io.perfmap.Status", none))
	if c2 != c1+1 {
		fail("Snapshot oneway: segments closed %d then %d: it did not run", c1, c2)
	}
	note("oneway: no reply (not even an error), the call ran")
}

// Pipelined: Store (streamed, done by the worker), Ping, Export, Status sent
// at once; the replies come in call order, Store's stream ending first.
func checkPipeline(segment string) {
	c := connect()
	defer c.Close()
	type sent struct {
		call string
		recv func(context.Context, interface{}) (uint64, error)
	}
	var q []sent
	send := func(call string, params interface{}, flags uint64) {
		r, err := c.Send(ctx, call, params, flags)
		if err != nil {
			fail("pipeline %s: %v", call, err)
			return
		}
		q = append(q, sent{call, r})
	}
	seg := map[string]interface{}{"segments": []string{segment}}
	none := map[string]interface{}{}
	send("io.perfmap.Store", seg, varlink.More)
	send("io.perfmap.Ping", none, 0)
	send("io.perfmap.Export", map[string]interface{}{"segments": []string{segment}, "name": "p.tar.gz"}, 0)
	send("io.perfmap.Status", none, 0)
	send("io.perfmap.Store", seg, 0)
	send("io.perfmap.Ping", none, 0)
	order := []string{}
	for _, s := range q {
		n := 0
		for {
			v, f, err := receive(s.call, s.recv)
			n++
			if err != nil {
				fail("pipeline %s: %v", s.call, err)
				break
			}
			if s.call == "io.perfmap.Ping" && v["pong"] != true {
				fail("pipeline: Ping's turn, got %v", v)
			}
			if f&varlink.Continues == 0 {
				break
			}
		}
		order = append(order, fmt.Sprintf("%s(%d)", strings.TrimPrefix(s.call, "io.perfmap."), n))
	}
	note("pipelined: replies in call order: %s", strings.Join(order, " "))
}

func main() {
	sock := flag.String("socket", "", "the daemon's control socket")
	dir := flag.String("idl", "", "the directory of the .varlink files")
	path := flag.String("path", "", "a binary the daemon has seen")
	only := flag.String("only", "", "oneway or pipeline: that check alone (and no Stop)")
	flag.Parse()
	addr = *sock
	var cancel context.CancelFunc
	ctx, cancel = context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	names, _ := filepath.Glob(filepath.Join(*dir, "*.varlink"))
	for _, f := range names {
		b, err := ioutil.ReadFile(f)
		if err != nil {
			fail("%s: %v", f, err)
			continue
		}
		in, err := idl.New(string(b))
		if err != nil {
			fail("%s: the reference IDL parser refuses it: %v", f, err)
			continue
		}
		if filepath.Base(f) != in.Name+".varlink" {
			fail("%s defines %s", f, in.Name)
		}
		// every type a definition names is defined
		for _, m := range in.Members {
			var t *idl.Type
			var what string
			switch x := m.(type) {
			case *idl.Alias:
				t, what = x.Type, "type "+x.Name
			case *idl.Method:
				t, what = &idl.Type{Kind: idl.TypeStruct, Fields: append(append([]idl.TypeField{}, x.In.Fields...), x.Out.Fields...)}, "method "+x.Name
			case *idl.Error:
				t, what = x.Type, "error "+x.Name
			}
			if name := undefined(in, t); name != "" {
				fail("%s: %s names type %s, which is not defined", f, what, name)
			}
		}
		ifaces[in.Name] = in
		files[in.Name] = string(b)
		note("%s: parsed (%d methods, %d types, %d errors)", filepath.Base(f), len(in.Methods), len(in.Aliases), len(in.Errors))
	}
	if ifaces["io.perfmap"] == nil || ifaces["org.varlink.service"] == nil {
		fail("io.perfmap.varlink and org.varlink.service.varlink are needed in %s", *dir)
		os.Exit(1)
	}
	if *only != "" {
		c := connect()
		snap := mustCall(c, "io.perfmap.Snapshot", map[string]interface{}{})
		c.Close()
		map[string]func(string){"oneway": checkOneway, "pipeline": checkPipeline}[*only](filepath.Base(str(snap, "path")))
		if nfail > 0 {
			os.Exit(1)
		}
		return
	}
	// each check on its own connection: one that breaks does not hide the others
	for _, check := range []func(*varlink.Connection){
		checkInterfaces, checkStandardErrors, checkParameters,
	} {
		c := connect()
		check(c)
		c.Close()
	}
	checkRawErrors()
	c := connect()
	segment := checkMethods(c, *path)
	c.Close()
	checkOneway(segment)
	checkPipeline(segment)
	c = connect()
	if v := mustCall(c, "io.perfmap.Stop", nil); v["stopping"] != true {
		fail("Stop: %v", v)
	}
	c.Close()
	if nfail > 0 {
		fmt.Fprintf(os.Stderr, "%d failures in %d replies\n", nfail, ncalls)
		os.Exit(1)
	}
	fmt.Printf("PASS: %d replies and errors checked against the interface definitions\n", ncalls)
}
