//! Networks as values (SPEC §1.4): `make-network` in both keyword styles, networks as logical
//! topologies of tasks (`network-tasks`, `neighbor`, `coords`, `task-at`), `target`, and applying a
//! canned mapping (Minsky §4.2.1: mappings "which capture known optimal mappings from logical to
//! physical topologies").

use std::rc::Rc;

use ttdl_ir::settings::{Setting, SETTINGS};
use ttdl_ir::topology::{Kind, Network, NetworkSpec, Port, TopologyError};
use ttdl_ir::traffic::{Target, TaskId};

use super::ast::{KeyArg, Node, NodeKind};
use super::builtins::Args;
use super::env::Env;
use super::machine::{type_error, Machine, R};
use super::value::{NetValue, Value};
use crate::diagnostic::Diagnostic;
use crate::span::Span;

const NETWORK_KEYS: &str = ":topology :dims :n :ndim :nx :ny :nz :routing :edges";
/// The keywords `(target …)` takes: the settings table's rows marked for it.
fn target_keys_help(key: &str) -> String {
    let keys: Vec<&str> = SETTINGS
        .iter()
        .filter(|s| s.target)
        .map(|s| s.name)
        .collect();
    match ttdl_ir::settings::did_you_mean(key, keys.iter().copied()) {
        Some(k) => format!("did you mean `:{k}`? the options are :{}", keys.join(" :")),
        None => format!("the options are :{}", keys.join(" :")),
    }
}

fn bad(span: Span, msg: impl Into<String>, label: &str) -> Diagnostic {
    Diagnostic::new("type", msg).with_label(span, label.to_string())
}

impl Machine {
    /// The text of a name-like value (`mesh`, `"2d-mesh"`, `:torus`).
    fn name_text(&self, v: &Value) -> Option<String> {
        match v {
            Value::Symbol(s) | Value::Keyword(s) => Some(self.name(*s).to_string()),
            Value::Str(s) => Some(s.to_string()),
            _ => None,
        }
    }

    pub fn eval_network_form(&mut self, node: &Node, env: &Env) -> R<Value> {
        match &node.kind {
            NodeKind::MakeNetwork(args) => self.make_network(args, env, node.span),
            NodeKind::Target { network, options } => self.target(network, options, env, node.span),
            _ => Ok(Value::Nil),
        }
    }

    fn make_network(&mut self, args: &[KeyArg], env: &Env, span: Span) -> R<Value> {
        let mut topology: Option<(String, Span)> = None;
        let mut dims: Option<Vec<usize>> = None;
        let (mut n, mut ndim) = (None, None);
        let mut axes: [Option<usize>; 3] = [None; 3];
        let mut routing = None;
        let mut edges = Vec::new();
        for arg in args {
            let v = match arg.key.as_str() {
                "topology" | "routing" => self.eval_soft_as(&arg.value, env, name_like)?,
                // A number or a flag is evaluated; any other setting's bare name means the
                // name even where a variable has another meaning (`:schedule lp`).
                key => match Setting::find(key).map(|r| r.kind) {
                    Ok(ttdl_ir::settings::Kind::Int { .. })
                    | Ok(ttdl_ir::settings::Kind::IntOrUnbounded { .. })
                    | Ok(ttdl_ir::settings::Kind::Flag) => self.eval_soft(&arg.value, env)?,
                    _ => self.eval_soft_as(&arg.value, env, name_like)?,
                },
            };
            let vspan = arg.value.span();
            let positive = |m: &Machine, v: &Value| -> R<usize> {
                match v {
                    Value::Int(i) if *i >= 1 => Ok(*i as usize),
                    other => Err(type_error(
                        vspan,
                        "a positive integer",
                        other,
                        m.show(other),
                    )),
                }
            };
            match arg.key.as_str() {
                "topology" => {
                    let text = self.name_text(&v).ok_or_else(|| {
                        type_error(vspan, "a topology name such as `mesh`", &v, self.show(&v))
                    })?;
                    topology = Some((text, vspan));
                }
                "dims" => {
                    let items = v.to_vec().unwrap_or_else(|| vec![v.clone()]);
                    let mut out = Vec::new();
                    for i in &items {
                        out.push(positive(self, i)?);
                    }
                    dims = Some(out);
                }
                "n" => n = Some(positive(self, &v)?),
                "ndim" => ndim = Some(positive(self, &v)?),
                "nx" => axes[0] = Some(positive(self, &v)?),
                "ny" => axes[1] = Some(positive(self, &v)?),
                "nz" => axes[2] = Some(positive(self, &v)?),
                "routing" => routing = self.name_text(&v),
                "edges" => {
                    let items = v.to_vec().ok_or_else(|| {
                        type_error(vspan, "a list of `(a b)` pairs", &v, self.show(&v))
                    })?;
                    for e in items {
                        match e.to_vec().as_deref() {
                            Some([Value::Int(a), Value::Int(b)]) if *a >= 0 && *b >= 0 => {
                                edges.push((*a as usize, *b as usize))
                            }
                            _ => {
                                return Err(type_error(
                                    vspan,
                                    "edges as `(a b)` node pairs",
                                    &e,
                                    self.show(&e),
                                ))
                            }
                        }
                    }
                }
                other => {
                    return Err(bad(
                        arg.key_span,
                        format!("`make-network` has no option `:{other}`"),
                        "unknown option",
                    )
                    .with_help(format!("the options are {NETWORK_KEYS}")))
                }
            }
        }
        let Some((topo, topo_span)) = topology else {
            return Err(bad(
                span,
                "`make-network` needs `:topology`",
                "no topology given",
            )
            .with_help("e.g. `(make-network :topology mesh :dims (list 4 4))`"));
        };
        // The thesis spells kinds "2d-mesh", "3d-torus": the prefix gives the dimension count.
        let lower = topo.to_ascii_lowercase();
        let (prefix_dims, base) = match lower.split_once("d-") {
            Some((d, rest)) if d.parse::<usize>().is_ok() => {
                (d.parse::<usize>().ok(), rest.to_string())
            }
            _ => (None, lower.clone()),
        };
        let base = match base.as_str() {
            "grid" => "mesh".to_string(),
            "cube" | "binary-hypercube" => "hypercube".to_string(),
            "numesh" => "diamond".to_string(),
            _ => base,
        };
        let kind: Kind = base
            .parse()
            .map_err(|e: TopologyError| bad(topo_span, e.to_string(), "unknown topology"))?;
        let ndim = ndim.or(prefix_dims);
        let dims = match dims {
            Some(d) => d,
            None => self.infer_dims(kind, n, ndim, axes, &edges, span)?,
        };
        let mut spec = NetworkSpec::new(kind, dims);
        spec.edges = edges;
        spec.validate()
            .map_err(|e| bad(span, e.to_string(), "this network"))?;
        let net = match Network::build(&spec) {
            Ok(net) => Some(net),
            Err(TopologyError::NotYet(_)) => None,
            Err(e) => return Err(bad(span, e.to_string(), "this network")),
        };
        let id = self.nets.len();
        let value = Rc::new(NetValue {
            id,
            spec,
            net,
            routing,
            span,
        });
        self.nets.push(value.clone());
        self.net_tasks.push(None);
        Ok(Value::Network(value))
    }

    fn infer_dims(
        &self,
        kind: Kind,
        n: Option<usize>,
        ndim: Option<usize>,
        axes: [Option<usize>; 3],
        edges: &[(usize, usize)],
        span: Span,
    ) -> R<Vec<usize>> {
        let given: Vec<usize> = axes.iter().map_while(|a| *a).collect();
        let missing = || {
            bad(
                span,
                format!("cannot tell the size of this {}", kind.name()),
                "no size given",
            )
            .with_help("give `:dims (list …)`, or `:n` (and `:ndim`), or `:nx :ny :nz`")
        };
        match kind {
            Kind::Hypercube => match (n, ndim) {
                (Some(n), _) if n.is_power_of_two() => Ok(vec![n.trailing_zeros() as usize]),
                (Some(n), _) => Err(bad(
                    span,
                    format!("a hypercube has a power of two nodes, not {n}"),
                    "here",
                )),
                (None, Some(d)) => Ok(vec![d]),
                _ => Err(missing()),
            },
            Kind::Ring | Kind::Line | Kind::Crossbar => n
                .or(given.first().copied())
                .map(|n| vec![n])
                .ok_or_else(missing),
            Kind::Graph => {
                let from_edges = edges.iter().map(|&(a, b)| a.max(b) + 1).max();
                n.or(from_edges).map(|n| vec![n]).ok_or_else(missing)
            }
            Kind::Mesh | Kind::Torus | Kind::Diamond => {
                let d = ndim.unwrap_or(if given.is_empty() { 2 } else { given.len() });
                if !given.is_empty() {
                    if given.len() < d {
                        return Err(bad(
                            span,
                            format!(
                                "{d} dimensions but only {} extents (`:nx :ny :nz`)",
                                given.len()
                            ),
                            "here",
                        ));
                    }
                    return Ok(given[..d].to_vec());
                }
                let n = n.ok_or_else(missing)?;
                let side = (n as f64).powf(1.0 / d as f64).round() as usize;
                if side.checked_pow(d as u32) != Some(n) {
                    return Err(bad(
                        span,
                        format!(
                            "{n} nodes do not make a square {d}-dimensional {}",
                            kind.name()
                        ),
                        "here",
                    )
                    .with_help("give the extents with `:nx :ny` or `:dims (list …)`"));
                }
                Ok(vec![side; d])
            }
            _ => Err(bad(
                span,
                format!("a {} network is read from a file", kind.name()),
                "here",
            )
            .with_help(format!(
                "write the network as a string: `(target \"{}\")`",
                kind.topology().example()
            ))),
        }
    }

    fn target(&mut self, network: &Node, options: &[KeyArg], env: &Env, span: Span) -> R<Value> {
        let v = self.eval(network, env)?;
        let net = match &v {
            Value::Network(n) => n.clone(),
            Value::Str(s) => {
                let spec: NetworkSpec = s
                    .parse()
                    .map_err(|e: TopologyError| bad(network.span, e.to_string(), "this network"))?;
                let net = Network::build(&spec).ok();
                let id = self.nets.len();
                let n = Rc::new(NetValue {
                    id,
                    spec,
                    net,
                    routing: None,
                    span: network.span,
                });
                self.nets.push(n.clone());
                self.net_tasks.push(None);
                n
            }
            other => {
                return Err(type_error(
                    network.span,
                    "a physical network (`make-network`)",
                    other,
                    self.show(other),
                ))
            }
        };
        let mut target = Target {
            network: Some(net.spec.clone()),
            ..Target::default()
        };
        for arg in options {
            let v = match arg.key.as_str() {
                "mapping" => self.eval_soft_as(&arg.value, env, |v| {
                    name_like(v) || matches!(v, Value::Closure(_) | Value::Builtin(_))
                })?,
                // A number or a flag is evaluated; any other setting's bare name means the
                // name even where a variable has another meaning (`:schedule lp`).
                key => match Setting::find(key).map(|r| r.kind) {
                    Ok(ttdl_ir::settings::Kind::Int { .. })
                    | Ok(ttdl_ir::settings::Kind::IntOrUnbounded { .. })
                    | Ok(ttdl_ir::settings::Kind::Flag) => self.eval_soft(&arg.value, env)?,
                    _ => self.eval_soft_as(&arg.value, env, name_like)?,
                },
            };
            let vspan = arg.value.span();
            let text = |m: &Machine, v: &Value| -> R<String> {
                if let Value::Closure(c) = v {
                    if let Some(n) = c.name() {
                        return Ok(m.name(n).to_string());
                    }
                }
                m.name_text(v)
                    .ok_or_else(|| type_error(vspan, "a name", v, m.show(v)))
            };
            match arg.key.as_str() {
                "mapping" => target.mapping = Some(text(self, &v)?),
                // Every other keyword is a row of the settings table, checked now, with the
                // value's span, not later as a flag the user never passed.
                key => {
                    let row = match Setting::find(key) {
                        Ok(row) if row.target && row.name != "mapping" => row,
                        _ => {
                            return Err(bad(
                                arg.key_span,
                                format!("`target` has no option `:{key}`"),
                                "unknown option",
                            )
                            .with_help(target_keys_help(key)))
                        }
                    };
                    let written = match &v {
                        Value::Int(n) => n.to_string(),
                        Value::Bool(b) => if *b { "on" } else { "off" }.to_string(),
                        other => text(self, other)?,
                    };
                    if let Err(e) = target.settings.set(row.name, &written) {
                        return Err(bad(
                            vspan,
                            format!("`target :{key}` cannot be `{written}`"),
                            if matches!(row.kind, ttdl_ir::settings::Kind::Choice(_)) {
                                "not a choice"
                            } else {
                                "not a value it takes"
                            },
                        )
                        .with_help(e.to_string()));
                    }
                }
            }
        }
        let _ = span;
        self.comm.set_target(target.clone());
        self.target = Some(target);
        self.target_net = Some(net);
        Ok(Value::Nil)
    }

    /// The tasks of a network, one per node in node order (x fastest), made on first use.
    pub fn network_tasks_of(&mut self, net: &Rc<NetValue>, span: Span) -> R<Rc<[TaskId]>> {
        if let Some(Some(ts)) = self.net_tasks.get(net.id) {
            return Ok(ts.clone());
        }
        let nodes = net.nodes();
        if nodes > self.budget.tasks {
            return Err(Diagnostic::new(
                "budget",
                format!(
                    "{} has {nodes} nodes, more than the task budget ({})",
                    net.spec, self.budget.tasks
                ),
            )
            .with_label(span, "one task per node is made here")
            .with_help("use a smaller network, or raise the task budget (`Limits::tasks`)"));
        }
        let prefix = if net.id == 0 {
            String::new()
        } else {
            format!("n{}.", net.id)
        };
        let mut tasks = Vec::with_capacity(nodes);
        for node in 0..nodes {
            let c = net.coords(node);
            let parts: Vec<String> = c.iter().map(|x| x.to_string()).collect();
            let name = format!("{prefix}t{}", parts.join("_"));
            let t = self.comm.fresh_task(&name, span)?;
            self.comm.set_coords(t, c);
            tasks.push(t);
        }
        self.comm.set_logical(net.spec.clone());
        let tasks: Rc<[TaskId]> = tasks.into();
        if let Some(slot) = self.net_tasks.get_mut(net.id) {
            *slot = Some(tasks.clone());
        }
        Ok(tasks)
    }

    /// Which node of `net` a task is, if it is one of its tasks.
    fn node_of(&mut self, net: &Rc<NetValue>, task: TaskId, span: Span) -> R<Option<usize>> {
        let tasks = self.network_tasks_of(net, span)?;
        // Tasks are made consecutively, so the offset is the node; fall back to a search.
        if let Some(&first) = tasks.first() {
            if let Some(node) = task.checked_sub(first) {
                if tasks.get(node) == Some(&task) {
                    return Ok(Some(node));
                }
            }
        }
        Ok(tasks.iter().position(|&t| t == task))
    }

    /// Calls a mapping on one logical coordinate; checks it returns a coordinate list.
    pub fn map_coords(
        &mut self,
        mapping: &Value,
        coords: &[i64],
        logical: &Rc<NetValue>,
        span: Span,
    ) -> R<Vec<i64>> {
        let physical = match &self.target_net {
            Some(n) => Value::Network(n.clone()),
            None => Value::Nil,
        };
        let mut args = vec![
            Value::list(coords.iter().map(|&c| Value::Int(c)).collect::<Vec<_>>()),
            Value::Network(logical.clone()),
            physical,
        ];
        let (takes, def_span) = match mapping {
            Value::Closure(c) => {
                let l = &c.lambda;
                let max = if l.rest.is_some() {
                    usize::MAX
                } else {
                    l.required.len() + l.optional.len()
                };
                (max, l.span)
            }
            _ => (3, span),
        };
        args.truncate(takes.max(1));
        let result = self.apply(mapping, args, span)?;
        match result.to_vec() {
            Some(items) if items.iter().all(|v| matches!(v, Value::Int(_))) => Ok(items
                .iter()
                .map(|v| if let Value::Int(i) = v { *i } else { 0 })
                .collect()),
            _ => Err(type_error(
                def_span,
                "a mapping to return a list of integer coordinates",
                &result,
                self.show(&result),
            )),
        }
    }

    /// A copy of everything but the communication built so far, for side computations
    /// (applying a mapping) that must not disturb it.
    pub fn scratch(&self) -> Machine {
        let mut m = Machine {
            syms: self.syms.clone(),
            globals: self.globals.clone(),
            locals: self.locals.clone(),
            comm: crate::comm::Comm::new(self.comm.limits()),
            budget: self.budget,
            known: self.known.clone(),
            steps: 0,
            depth: 0,
            nesting: 0,
            ctx: Vec::new(),
            output: String::new(),
            nets: self.nets.clone(),
            net_tasks: self.net_tasks.clone(),
            target: self.target.clone(),
            target_net: self.target_net.clone(),
            expansions: 0,
            next_check: 0,
            interrupt: self.interrupt.clone(),
            effects: 0,
            fold: self.fold,
            frames: Default::default(),
            pending: Default::default(),
            stack: Default::default(),
            native_env: std::ptr::null(),
            native_floor: usize::MAX,
            start: self.start,
        };
        m.reset_steps();
        m
    }
}

fn name_like(v: &Value) -> bool {
    matches!(v, Value::Symbol(_) | Value::Keyword(_) | Value::Str(_))
}

fn net_arg(m: &Machine, a: &Args, i: usize) -> R<Rc<NetValue>> {
    match a.get(i) {
        Value::Network(n) => Ok(n.clone()),
        _ => Err(a.type_err(m, i, "a network (`make-network`)")),
    }
}

fn task_arg(m: &Machine, a: &Args, i: usize) -> R<TaskId> {
    match a.get(i) {
        Value::Task(t) => Ok(*t),
        _ => Err(a.type_err(m, i, "a task")),
    }
}

pub fn network_tasks(m: &mut Machine, a: &Args) -> R<Value> {
    let net = net_arg(m, a, 0)?;
    let tasks = m.network_tasks_of(&net, a.span)?;
    Ok(Value::list(
        tasks.iter().map(|&t| Value::Task(t)).collect::<Vec<_>>(),
    ))
}

fn not_a_node(m: &Machine, a: &Args, net: &NetValue, task: TaskId) -> Diagnostic {
    Diagnostic::new(
        "type",
        format!(
            "task `{}` is not a node of the network {}",
            m.comm.task_name(task),
            net.spec
        ),
    )
    .with_label(a.span(1), "this task")
    .with_help("use tasks from `(network-tasks NET)` of the same network")
}

/// `(neighbor NET TASK DIR)`: the task one step away (`east west north south up down` = ±x ±y
/// ±z); wraps on a torus or ring, `nil` off the edge of a mesh. On a hypercube a direction (or an
/// integer dimension) flips that coordinate bit.
pub fn neighbor(m: &mut Machine, a: &Args) -> R<Value> {
    let net = net_arg(m, a, 0)?;
    let task = task_arg(m, a, 1)?;
    let (dim, positive) = match a.get(2) {
        Value::Int(k) if *k >= 0 => (*k as usize, true),
        v => {
            let dir = m.name_text(v).map(|s| s.to_ascii_lowercase());
            match dir.as_deref() {
                Some("east" | "+x") => (0, true),
                Some("west" | "-x") => (0, false),
                Some("north" | "+y") => (1, true),
                Some("south" | "-y") => (1, false),
                Some("up" | "+z") => (2, true),
                Some("down" | "-z") => (2, false),
                _ => {
                    return Err(a
                        .type_err(m, 2, "a direction")
                        .with_help("directions are east west north south up down (±x ±y ±z)"))
                }
            }
        }
    };
    let Some(node) = m.node_of(&net, task, a.span)? else {
        return Err(not_a_node(m, a, &net, task));
    };
    let mut c = net.coords(node);
    let ndims = c.len();
    if dim >= ndims {
        return Err(Diagnostic::new(
            "type",
            format!(
                "{} has {ndims} dimension{}, so it has no neighbour along dimension {}",
                net.spec,
                super::ast::plural(ndims),
                dim + 1
            ),
        )
        .with_label(a.span(2), "this direction"));
    }
    let next = match net.spec.kind {
        Kind::Mesh | Kind::Line | Kind::Torus | Kind::Ring => {
            let extent = net.spec.dims.get(dim).copied().unwrap_or(1) as i64;
            let wrap = matches!(net.spec.kind, Kind::Torus | Kind::Ring);
            let x = c[dim] + if positive { 1 } else { -1 };
            if wrap {
                c[dim] = x.rem_euclid(extent);
            } else if x < 0 || x >= extent {
                return Ok(Value::Nil);
            } else {
                c[dim] = x;
            }
            net.node_at(&c)
        }
        Kind::Hypercube => {
            c[dim] ^= 1;
            net.node_at(&c)
        }
        _ => match &net.net {
            Some(built) => built.neighbor(
                node,
                Port::Dir {
                    dim: dim as u8,
                    positive,
                },
            ),
            None => {
                return Err(Diagnostic::new(
                    "type",
                    format!("`neighbor` is not defined on a {}", net.spec.kind.name()),
                )
                .with_label(a.span(0), "this network")
                .with_help("use `task-at` with explicit coordinates"))
            }
        },
    };
    let tasks = m.network_tasks_of(&net, a.span)?;
    Ok(next
        .and_then(|n| tasks.get(n))
        .map(|&t| Value::Task(t))
        .unwrap_or(Value::Nil))
}

/// `(coords NET TASK)`: the task's coordinates in that network, x first.
pub fn coords(m: &mut Machine, a: &Args) -> R<Value> {
    let net = net_arg(m, a, 0)?;
    let task = task_arg(m, a, 1)?;
    let Some(node) = m.node_of(&net, task, a.span)? else {
        return Err(not_a_node(m, a, &net, task));
    };
    Ok(Value::list(
        net.coords(node)
            .into_iter()
            .map(Value::Int)
            .collect::<Vec<_>>(),
    ))
}

/// `(task-at NET COORDS)`: the task at those coordinates (wrapping on a torus), or `nil`.
pub fn task_at(m: &mut Machine, a: &Args) -> R<Value> {
    let net = net_arg(m, a, 0)?;
    let items = match a.get(1) {
        Value::Int(i) => vec![Value::Int(*i)],
        v => v
            .to_vec()
            .ok_or_else(|| a.type_err(m, 1, "a list of coordinates"))?,
    };
    let mut c = Vec::with_capacity(items.len());
    for v in &items {
        match v {
            Value::Int(i) => c.push(*i),
            _ => return Err(a.type_err(m, 1, "a list of integer coordinates")),
        }
    }
    if matches!(net.spec.kind, Kind::Torus | Kind::Ring) && c.len() == net.spec.dims.len() {
        for (x, &d) in c.iter_mut().zip(&net.spec.dims) {
            *x = x.rem_euclid(d as i64);
        }
    }
    let tasks = m.network_tasks_of(&net, a.span)?;
    Ok(net
        .node_at(&c)
        .and_then(|n| tasks.get(n))
        .map(|&t| Value::Task(t))
        .unwrap_or(Value::Nil))
}

pub fn network_size(m: &mut Machine, a: &Args) -> R<Value> {
    Ok(Value::Int(net_arg(m, a, 0)?.nodes() as i64))
}

pub fn network_dims(m: &mut Machine, a: &Args) -> R<Value> {
    let net = net_arg(m, a, 0)?;
    Ok(Value::list(
        net.spec
            .dims
            .iter()
            .map(|&d| Value::Int(d as i64))
            .collect::<Vec<_>>(),
    ))
}

pub fn network_kind(m: &mut Machine, a: &Args) -> R<Value> {
    let net = net_arg(m, a, 0)?;
    Ok(Value::Symbol(m.intern(net.spec.kind.name())))
}
