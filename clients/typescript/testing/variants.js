// Hand-made variants of corpus payloads that exercise Go's decoding semantics the random mutants
// rarely reach: duplicate and case-variant members, null, merging of a later duplicate into an
// earlier value (slices reused up to their capacity), data:null, escapes.
export function variants(valid01, valid03) {
  const a = valid01.toString('utf8');
  const b = valid03.toString('utf8');
  const hist = JSON.stringify(JSON.parse(b).history);
  const v = [];
  const add = (s) => v.push(Buffer.from(s, 'utf8'));
  // duplicates and case variants at the top level
  add(a.replace('"status":"suspended"', '"status":"suspended","status":"completed"'));
  add(a.replace('"status":"suspended"', '"status":"completed","Status":"suspended"'));
  add(a.replace('"run_id":"run-1"', '"run_id":"run-1","RUN_ID":"run-2"'));
  add(a.replace('"run_id":"run-1"', '"run_id":null'));
  add(a.replace('"run_id":"run-1"', '"\u212Aun_id":"run-1"'));
  add(a.replace('"status":"suspended"', '"\u017Ftatus":"suspended"'));
  add(a.replace('"version":', '"VERSION":'));
  add(a.replace('"last_sequence":7', '"last_sequence":7,"last_sequence":null'));
  add(a.replace('"last_sequence":7', '"last_sequence":null'));
  add(a.replace('"last_sequence":7', '"last_sequence":0'));
  add(a.replace('"seen_interaction_ids":[]', '"seen_interaction_ids":null'));
  add(a.replace(',"seen_interaction_ids":[]', ''));
  add(a.replace('"seen_interaction_ids":[]', '"seen_interaction_ids":["b","a"],"seen_interaction_ids":[]'));
  add(a.replace('"seen_interaction_ids":[]', '"seen_interaction_ids":["a","b"],"seen_interaction_ids":["c"]'));
  add(a.replace('"definition":{', '"definition":null,"definition":{'));
  add(a.replace('"definition":{', '"definition":{"name":"x"},"definition":{'));
  add(a.replace('"max_turns":3}', '"max_turns":3},"definition":{"model":"other"}'));
  add(a.replace('"max_turns":3}', '"max_turns":3},"definition":{"model":null}'));
  add(a.replace('"max_turns":3', '"max_turns":3,"max_turns":"3"'));
  add(a.replace('"plan_identity":{', '"plan_identity":{"fingerprint":"x"},"plan_identity":{'));
  add(a.replace('"compiled_identities":[', '"compiled_identities":null,"compiled_identities":['));
  add(a.replace('"compiled_identities":[', '"compiled_identities":["zzz:a","zzz:b","zzz:c","zzz:d"],"compiled_identities":['));
  // history merging: a later, shorter history decoded into a longer one reuses its elements
  add(b.replace('"history":[', `"history":${hist},"history":[`));
  add(b.replace('"history":[', `"history":${hist.replace(/"role":"assistant"/g, '"role":"tool"')},"history":[`));
  add(a.replace('"history":[', `"history":${hist},"history":[`));
  add(b.replace('"history":[', `"history":[{"id":"x"}],"history":[`));
  add(a.replace('"history":[{', `"history":[{"parts":[{"kind":"text","text":"a"},{"kind":"text","text":"b"}]},{"id":"m2","role":"user","parts":[{"kind":"text","text":"c"}]}],"history":[{`));
  add(a.replace('"history":[', '"history":null,"history":['));
  add(a.replace('"history":[', '"history":[],"history":['));
  add(a.replace('"history":[', '"history":{},"history":['));
  // merging that a rule can see: the later value leaves members of the earlier one in place
  const user = '{"id":"input-1","role":"user","parts":[{"kind":"text","text":"hello"}]}';
  const two = '{"id":"m2","role":"assistant","parts":[{"kind":"text","text":"x"}]}';
  add(a.replace(`"history":[${user}]`, '"history":[{"role":"assistant"}],"history":[{"id":"input-1","parts":[{"kind":"text","text":"hello"}]}]'));
  add(a.replace(`"history":[${user}]`, '"history":[{"id":"input-1","role":"user","parts":[{"kind":"tool_call","name":"x"}]}],"history":[{"parts":[{"kind":"text","text":"hello"}]}]'));
  add(a.replace(`"history":[${user}]`, `"history":[${user},${two}],"history":[${user}],"history":[${user},{"id":"m2","parts":[{"kind":"text","text":"x"}]}]`));
  add(a.replace(`"history":[${user}]`, `"history":[${user},${two}],"history":[],"history":[${user},{"id":"m2","parts":[{"kind":"text","text":"x"}]}]`));
  add(a.replace(`"history":[${user}]`, `"history":[${user},${two}],"history":null,"history":[${user},{"id":"m2","parts":[{"kind":"text","text":"x"}]}]`));
  add(a.replace('"definition":{"name":"test"', '"definition":{"name":" x"},"definition":{"name":null'));
  add(a.replace('"definition":{"name":"test"', '"definition":{"name":" x"},"definition":{"name":"test"'));
  add(a.replace('"seen_interaction_ids":[]', '"seen_interaction_ids":["b","a"],"seen_interaction_ids":["c"],"seen_interaction_ids":["a",null]'));
  add(a.replace('"compiled_identities":[', '"compiled_identities":["zzz:a","zzz:b","zzz:c","zzz:d"],"compiled_identities":["broker:injected"],"compiled_identities":['));
  // part members
  add(b.replace('"data":{', '"data":null,"data":{'));
  add(b.replace(/"data":\{[^}]*\}/, '"data":null'));
  add(b.replace(/"data":\{[^}]*\}/, '"data" : { "path" : "." }'));
  add(b.replace('"kind":"tool_call"', '"KIND":"tool_call"'));
  add(b.replace('"kind":"tool_call"', '"kind":"tool_call","kind":"text"'));
  add(b.replace('"kind":"text"', '"kind":"text","data":null'));
  add(b.replace('"kind":"text"', '"kind":"text","name":null'));
  add(b.replace('"kind":"text"', '"kind":"text","name":""'));
  add(b.replace('"call_id":"', '"call_id":"x","call_id":"'));
  add(b.replace('"call_id":"', '"CALL_ID":"'));
  add(b.replace('"parts":[', '"parts":null,"parts":['));
  add(b.replace('"parts":[', '"parts":[{"kind":"text","text":"a"},{"kind":"text","text":"b"},{"kind":"text","text":"c"}],"parts":['));
  // escapes and text
  add(a.replace('"text":"hello"', '"text":"hel\\u006co"'));
  add(a.replace('"text":"hello"', '"text":"a\\/b"'));
  add(a.replace('"text":"hello"', '"text":"\\ud800"'));
  add(a.replace('"text":"hello"', '"text":"\\ud83d\\ude00"'));
  add(a.replace('"text":"hello"', '"text":"😀"'));
  add(a.replace('"text":"hello"', '"text":"<"'));
  add(a.replace('"text":"hello"', '"text":"\\u003c"'));
  add(a.replace('"text":"hello"', '"text":"\\u2028"'));
  add(a.replace('"text":"hello"', '"text":"\u2028"'));
  add(a.replace('"text":"hello"', '"text":"\\b\\f"'));
  add(a.replace('"text":"hello"', '"text":"\\u0008"'));
  add(a.replace('"text":"hello"', '"text":"\u007f"'));
  add(a.replace('"run_id":"run-1"', '"run_id":"run-\\ud800"'));
  add(a.replace('"run_id":"run-1"', '"run_id":"run-\\u00e9"'));
  add(Buffer.concat([Buffer.from(a.slice(0, a.indexOf('hello'))), Buffer.from([0xff]), Buffer.from(a.slice(a.indexOf('hello') + 5))]).toString('latin1'));
  add(' ' + a);
  add(a + ' ');
  add(a + '\n');
  add(a.replace('{"version"', '{ "version"'));
  // the version among the decoding rules: named before an unknown member, and v1alpha3's
  // plan_identity.workspace_fingerprint is a member v1alpha2 lacks (never the v1alpha3 version
  // itself: Java accepts that format, this client does not)
  const ws = `"sha256:${'f'.repeat(64)}"`;
  const other = (s, version) => s.replace('"version":"spice.agent.snapshot/v1alpha2"', `"version":${version}`);
  const extra = (s) => s.replace('"status":', '"extra":0,"status":');
  const withWs = (value, name = 'workspace_fingerprint') => a.replace('"tests:v1"', `"tests:v1","${name}":${value}`);
  for (const version of ['"spice.agent.snapshot/v9"', '"x"', 'null', '5']) {
    add(other(a, version));
    add(extra(other(a, version)));
    add(other(a, version) + 'x');
    add(other(a, version).replace('"max_turns":3', '"max_turns":3,"extra":0'));
    add(other(a, version).replace('"last_sequence":7', '"last_sequence":7.0'));
    add(extra(other(a, version).replace('"max_turns":3', '"max_turns":"3"')));
    add(other(withWs(ws), version));
  }
  add(extra(a.replace('"version":"spice.agent.snapshot/v1alpha2",', '')));
  for (const value of [ws, 'null', '""', '5', '[]', '{}', '"x"']) {
    add(withWs(value));
    add(withWs(value) + 'x');
    add(extra(withWs(value)));
    add(withWs(value).replace('"last_sequence":7', '"last_sequence":"7"'));
    add(withWs(value).replace('"max_turns":3', '"max_turns":"3"'));
  }
  for (const name of ['Workspace_Fingerprint', 'WORKSPACE_FINGERPRINT', 'wor\\u212aspace_fingerprint', 'work\u017fpace_fingerprint',
    'workspace_fingerprin', 'workspacefingerprint']) {
    add(withWs(ws, name));
  }
  add(a.replace('"tests:v1"', `"tests:v1","workspace_fingerprint":5,"workspace_fingerprint":${ws}`));
  add(a.replace('"status":', `"workspace_fingerprint":${ws},"status":`));
  add(a.replace('"plan_identity":{', `"plan_identity":{"workspace_fingerprint":null},"plan_identity":{`));
  return v;
}
