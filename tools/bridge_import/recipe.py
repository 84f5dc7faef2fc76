"""Reads a Megatron-Bridge performance recipe without running it: its settings, each with the line that set it.

A recipe is a Python function that builds a ConfigContainer by plain assignments (`cfg.model.x = 4`), calls to
helpers that do the same, and constructors with keyword arguments. This module walks those functions' syntax
trees (ast, never import or exec): constants, names, dicts, comparisons, `if`, calls into the recipe packages and
constructors are followed; any other statement is *unread* and the settings it would assign are reported, so the
caller can decide whether the recipe is still known well enough (tools/bridge_import/translate.py). The files
come from a Source (a folder, or a git revision: tools/bridge_import/versions.py); the few library calls a recipe
depends on that are not Python the reader can follow (dataclasses.replace, the device query, the old layout's
workload-config lookup) are emulated in tools/bridge_import/intrinsics.py.
"""
import ast
import os
import re

import intrinsics

# Only these packages' functions are followed; anything else called is a constructor (a CamelCase name: its
# keyword arguments become fields) or opaque.
FOLLOWED = ("megatron.bridge.perf_recipes", "megatron.bridge.recipes",
            "megatron.bridge.training.flex_dispatcher_backend")
# The old layout (before v0.6.0) runs from scripts/performance, whose folder is on sys.path: `utils.overrides`,
# `configs.qwen...` are modules there, followed like the recipe packages.
SCRIPT_PACKAGES = ("utils", "configs")
SCRIPT_DIR = "scripts/performance"
# Module-level names of the reserved models (LLAMA31_405B_*, DEEPSEEK_V3_*, llama31_405b_*): never stored, so
# never evaluated, whatever their value.
RESERVED_NAME = re.compile(r"405b|llama_?3_?1_|llama31|deepseek", re.I)
# mixed_precision.py's factories: the recipe kind they stand for (its fields are those of the factory's result).
PRECISION_FACTORIES = {
    "bf16_mixed": "bf16", "bf16_with_fp8_current_scaling_mixed": "fp8cs",
    "bf16_with_fp8_delayed_scaling_mixed": "fp8ds", "bf16_with_mxfp8_mixed": "fp8mx",
    "bf16_with_nvfp4_mixed": "nvfp4",
}
MAX_DEPTH = 12


class RecipeError(Exception):
    """The recipe cannot be read at all (a missing module or function); rel: the repo-relative file, if one."""

    def __init__(self, message, rel=None):
        super().__init__(message)
        self.rel = rel


class Unread(Exception):
    pass


class Opaque:
    """A value the reader does not know (an unfollowed call, a comprehension)."""

    def __init__(self, why):
        self.why = why

    def __repr__(self):
        return f"<{self.why}>"


class Record:
    """A config object: its fields, and the line that set each."""

    def __init__(self, kind, fields=None, where=None):
        self.kind = kind
        self.fields = dict(fields or {})
        self.where = dict(where or {})
        self.properties = {}  # name -> (module, FunctionDef): a dataclass's @property

    def copy(self):
        other = Record(self.kind, self.fields, self.where)
        other.properties = dict(self.properties)
        return other


class Reader:
    """REQUIRES: source is a Megatron-Bridge tree (versions.DirSource or GitSource); refuse(rel) is True for the
    repo-relative paths that must never be opened. context: what the emulated calls need (intrinsics.py: the
    row's GPU, the old layout's workload module, the Hub configs)."""

    def __init__(self, source, refuse, context=None):
        self.source, self.refuse = source, refuse
        self.context = dict(context or {})
        self.modules = {}
        self.unread = []  # (file:line, the cfg settings the statement would have assigned, why)
        self.workload_names = []  # the old layout's workload constants the recipe looked up

    # Modules -------------------------------------------------------------------------------------------------
    def path_of(self, module):
        """The repo-relative file of a module."""
        parts = module.split(".")
        folder = SCRIPT_DIR if parts[0] in SCRIPT_PACKAGES else "src"
        base = "/".join([folder] + parts)
        return base + ".py" if self.source.isfile(base + ".py") else base + "/__init__.py"

    def followed(self, module):
        return module.startswith(FOLLOWED) or module.split(".")[0] in SCRIPT_PACKAGES

    def module(self, name):
        if name not in self.modules:
            path = self.path_of(name)
            shown = self.source.show(path)
            if self.refuse(path):
                raise RecipeError(f"{shown}: reserved, not opened", path)
            if not self.source.isfile(path):
                raise RecipeError(f"{shown}: missing (module {name})", path)
            try:
                tree = ast.parse(self.source.read(path), filename=path)
            except (SyntaxError, UnicodeDecodeError, ValueError) as e:
                raise RecipeError(f"{shown}: not readable as Python ({type(e).__name__})", path) from None
            package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
            funcs, aliases, consts, classes = {}, {}, {}, {}
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and not RESERVED_NAME.search(node.name):
                    funcs[node.name] = node
                elif isinstance(node, ast.ClassDef):
                    classes[node.name] = node
                elif isinstance(node, ast.ImportFrom):
                    source = node.module or ""
                    if node.level:  # `from .llama3 import x`: relative to this package
                        base = package.split(".")[:len(package.split(".")) - node.level + 1]
                        source = ".".join(base + ([source] if source else []))
                    for a in node.names:
                        if not RESERVED_NAME.search(a.asname or a.name) and a.name != "*":
                            aliases[a.asname or a.name] = (source, a.name)
                elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        if isinstance(t, ast.Name) and node.value is not None and not RESERVED_NAME.search(t.id):
                            consts[t.id] = node.value
            self.modules[name] = {"path": path, "rel": path, "funcs": funcs, "aliases": aliases,
                                  "consts": consts, "classes": classes}
        return self.modules[name]

    def resolve(self, module, name, depth=0):
        """(module name, FunctionDef) or ("const", value) or None, following `from x import y as z`."""
        m = self.module(module)
        if name in m["funcs"]:
            return module, m["funcs"][name]
        if name in m["consts"]:
            return "const", self.expr(m["consts"][name], module, {}, depth + 1)
        if name in m["classes"]:
            return "class", (module, m["classes"][name])
        if name in m["aliases"] and depth < MAX_DEPTH:
            target, original = m["aliases"][name]
            if self.followed(target):
                found = self.resolve(target, original, depth + 1)
                if found is None and self.source.isfile(self.path_of(f"{target}.{original}")):
                    return "module", f"{target}.{original}"  # `from . import workload_base_configs`
                return found
            return "external", (target, original)
        return None

    # Functions -----------------------------------------------------------------------------------------------
    def call(self, module, func, args, kwargs, depth):
        if depth > MAX_DEPTH:
            raise Unread("calls nested too deep")
        frame = {}
        params = [a.arg for a in func.args.args]
        defaults = func.args.defaults
        for i, p in enumerate(params):
            if i < len(args):
                frame[p] = args[i]
            elif p in kwargs:
                frame[p] = kwargs[p]
            else:
                d = i - (len(params) - len(defaults))
                frame[p] = self.expr(defaults[d], module, {}, depth) if d >= 0 else Opaque(f"argument {p}")
        for a, d in zip(func.args.kwonlyargs, func.args.kw_defaults):
            frame[a.arg] = kwargs[a.arg] if a.arg in kwargs else (
                self.expr(d, module, {}, depth) if d is not None else Opaque(f"argument {a.arg}"))
        if func.args.kwarg is not None:  # **user_kwargs: the keyword arguments no parameter took
            taken = set(params) | {a.arg for a in func.args.kwonlyargs}
            frame[func.args.kwarg.arg] = {k: v for k, v in kwargs.items() if k not in taken}
        result = self.block(func.body, module, frame, depth)
        return None if result is _FALLTHROUGH else result

    def block(self, body, module, frame, depth):
        for stmt in body:
            try:
                result = self.statement(stmt, module, frame, depth)
            except Unread as e:
                self.unread.append((f"{self.module(module)['rel']}:{stmt.lineno}", assigned_keys(stmt, frame),
                                    str(e)))
                for name in assigned_names(stmt):
                    frame[name] = Opaque(f"unread at line {stmt.lineno}")
                continue
            if result is not _FALLTHROUGH:
                return result
        return _FALLTHROUGH

    def statement(self, stmt, module, frame, depth):
        where = f"{self.module(module)['rel']}:{stmt.lineno}"
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant):
                return _FALLTHROUGH  # a docstring
            result = self.expr(stmt.value, module, frame, depth)
            if isinstance(result, Opaque) and isinstance(stmt.value, ast.Call) and any(
                    isinstance(self.expr(a, module, frame, depth), Record) for a in stmt.value.args):
                # An unfollowed call handed a config may change it: what it sets is not known.
                raise Unread(f"{result.why} on a config: what it changes there is not read")
            return _FALLTHROUGH
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            if stmt.value is None:
                return _FALLTHROUGH
            value = self.expr(stmt.value, module, frame, depth)
            for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                self.store(target, value, module, frame, where, depth)
            return _FALLTHROUGH
        if isinstance(stmt, ast.Return):
            return self.expr(stmt.value, module, frame, depth) if stmt.value is not None else None
        if isinstance(stmt, ast.If):
            test = self.expr(stmt.test, module, frame, depth)
            if isinstance(test, Opaque):
                raise Unread(f"condition not known ({test.why})")
            return self.block(stmt.body if test else stmt.orelse, module, frame, depth)
        if isinstance(stmt, (ast.Pass, ast.Assert)):
            return _FALLTHROUGH  # an assert: the measured run passed it
        if isinstance(stmt, ast.Raise):
            raise Unread("raises")
        raise Unread(f"{type(stmt).__name__} statement")

    def store(self, target, value, module, frame, where, depth):
        if isinstance(target, ast.Name):
            frame[target.id] = value
            return
        if isinstance(target, ast.Attribute):
            owner = self.expr(target.value, module, frame, depth)
            if isinstance(owner, Record):
                owner.fields[target.attr] = value
                owner.where[target.attr] = where
                return
            raise Unread(f"assignment to .{target.attr} of an unknown object")
        if isinstance(target, ast.Tuple):
            values = value if isinstance(value, list) and len(value) == len(target.elts) else \
                [Opaque("tuple unpacking")] * len(target.elts)
            for t, v in zip(target.elts, values):
                self.store(t, v, module, frame, where, depth)
            return
        raise Unread(f"assignment to a {type(target).__name__}")

    # Expressions ---------------------------------------------------------------------------------------------
    def expr(self, node, module, frame, depth):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.expr(e, module, frame, depth) for e in node.elts]
        if isinstance(node, ast.Dict):
            out = {}
            for k, v in zip(node.keys, node.values):
                value = self.expr(v, module, frame, depth)
                if k is None:
                    if not isinstance(value, dict):
                        return Opaque("a dict unpacks an unknown value")
                    out.update(value)
                else:
                    out[self.expr(k, module, frame, depth)] = value
            return out
        if isinstance(node, ast.Name):
            if node.id in frame:
                return frame[node.id]
            if node.id in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.id]
            found = self.resolve(module, node.id)
            if found and found[0] in ("const", "module"):
                return found[1] if found[0] == "const" else found
            return Opaque(f"name {node.id}")
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "torch" and "torch" not in frame:
                return f"torch.{node.attr}"  # a dtype: torch.float32, torch.bfloat16
            owner = self.expr(node.value, module, frame, depth)
            if isinstance(owner, Record):
                if node.attr not in owner.fields and node.attr in owner.properties:
                    prop_module, func = owner.properties[node.attr]
                    return self.call(prop_module, func, [owner], {}, depth + 1)
                return owner.fields.get(node.attr, Opaque(f"unset .{node.attr}"))
            if isinstance(owner, tuple) and owner[0] == "module":
                found = self.resolve(owner[1], node.attr)
                return found[1] if found and found[0] == "const" else Opaque(f"name {node.attr}")
            return Opaque(f".{node.attr} of an unknown object")
        if isinstance(node, ast.IfExp):
            test = self.expr(node.test, module, frame, depth)
            if isinstance(test, Opaque):
                return Opaque("a conditional on an unknown value")
            return self.expr(node.body if test else node.orelse, module, frame, depth)
        if isinstance(node, ast.BinOp):
            return intrinsics.binop(node.op, self.expr(node.left, module, frame, depth),
                                    self.expr(node.right, module, frame, depth))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            v = self.expr(node.operand, module, frame, depth)
            return v if isinstance(v, Opaque) else not v
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self.expr(node.operand, module, frame, depth)
            return v if isinstance(v, Opaque) else -v
        if isinstance(node, ast.BoolOp):
            # Python's short circuit: `hasattr(cfg.model, "x") and cfg.model.x` never reads an unset field.
            value = None
            for v in node.values:
                value = self.expr(v, module, frame, depth)
                if isinstance(value, Opaque):
                    return Opaque("a boolean of unknown values")
                if bool(value) != isinstance(node.op, ast.And):
                    return value
            return value
        if isinstance(node, ast.Compare):
            return self.compare(node, module, frame, depth)
        if isinstance(node, ast.Call):
            return self.call_expr(node, module, frame, depth)
        return Opaque(type(node).__name__)

    def compare(self, node, module, frame, depth):
        left = self.expr(node.left, module, frame, depth)
        for op, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node, module, frame, depth)
            if isinstance(left, (Opaque, Record)) or isinstance(right, (Opaque, Record)):
                if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right_node, ast.Constant) \
                        and isinstance(left, Record):
                    ok = isinstance(op, ast.IsNot)  # a Record is never None
                else:
                    return Opaque("a comparison of unknown values")
            else:
                ok = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Is: lambda a, b: a is b,
                      ast.IsNot: lambda a, b: a is not b, ast.In: lambda a, b: a in b,
                      ast.NotIn: lambda a, b: a not in b}.get(type(op), None)
                if ok is None:
                    ok = intrinsics.ordering(op, left, right)
                    if isinstance(ok, Opaque):
                        return ok
                else:
                    try:
                        ok = ok(left, right)
                    except TypeError:
                        return Opaque("a comparison of unlike values")
            if not ok:
                return False
            left = right
        return True

    def call_expr(self, node, module, frame, depth):
        func = node.func
        args = [self.expr(a, module, frame, depth) for a in node.args if not isinstance(a, ast.Starred)]
        kwargs = {}
        for k in node.keywords:
            value = self.expr(k.value, module, frame, depth)
            if k.arg is not None:
                kwargs[k.arg] = value
            elif isinstance(value, dict):
                kwargs.update(value)  # f(**combined_kwargs)
            else:
                return Opaque("a call with unknown ** arguments")
        if isinstance(func, ast.Attribute):
            # AutoBridge.from_hf_pretrained(ID, ...).get_model_config() or .to_megatron_provider(...): the model is
            # the one the Hugging Face Hub's config.json for ID describes (the checkout does not hold it).
            if func.attr == "from_hf_pretrained" and args and isinstance(args[0], str):
                return Record("hf_bridge", {"hf_model_id": args[0]})
            if dotted(func) == "torch.cuda.get_device_properties":
                return Record("device_properties", intrinsics.device(self.context))
            if dotted(func) == "torch.cuda.is_available":
                return True  # the measured runs had their GPUs
            owner = self.expr(func.value, module, frame, depth)
            if func.attr in ("get_model_config", "to_megatron_provider") and isinstance(owner, Record) \
                    and owner.kind == "hf_bridge":
                model_id = owner.fields["hf_model_id"]
                return Record("hf_model", {"hf_model_id": model_id, **intrinsics.hub_fields(self.context, model_id)})
            return intrinsics.method(owner, func.attr, args)
        if not isinstance(func, ast.Name):
            return Opaque("a computed call")
        name = func.id
        if name == "getattr" and len(args) >= 2:
            owner, field = args[0], args[1]
            default = args[2] if len(args) > 2 else Opaque("getattr without default")
            return owner.fields.get(field, default) if isinstance(owner, Record) else Opaque("getattr")
        if name == "hasattr" and len(args) == 2:
            return args[1] in args[0].fields if isinstance(args[0], Record) else Opaque("hasattr")
        if name == "isinstance":
            if isinstance(args[0], Record) and isinstance(node.args[1], ast.Name):
                return args[0].kind == node.args[1].id  # a config object is of the class that built it
            if isinstance(args[0], Record):
                return False
            return intrinsics.isinstance_of(args[0], node.args[1])
        if name in intrinsics.BUILTINS and name not in frame:
            return intrinsics.builtin(name, args)
        if name in PRECISION_FACTORIES:
            return Record("mixed_precision", {"recipe": PRECISION_FACTORIES[name]})
        where = f"{self.module(module)['rel']}:{node.lineno}"
        found = self.resolve(module, name)
        emulated = intrinsics.emulated(found, name)
        if emulated:
            return emulated(self, args, kwargs, where, depth)
        if found and found[0] == "class":
            return self.construct(found[1], kwargs, where, depth)
        if found and found[0] not in ("const", "external", "module"):
            return self.call(found[0], found[1], args, kwargs, depth + 1)
        if found and found[0] == "external":
            name = found[1][1]
            if name in PRECISION_FACTORIES:
                return Record("mixed_precision", {"recipe": PRECISION_FACTORIES[name]})
        if name[:1].isupper():
            return Record(name, kwargs, {k: where for k in kwargs})
        return Opaque(f"call {name}()")

    def construct(self, found, kwargs, where, depth):
        """A dataclass the followed code defines (the old layout's WorkloadBaseConfig): its defaults, the
        keyword arguments, and its properties (read when a field of that name is asked for)."""
        module, cls = found
        record = Record(cls.name)
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                record.fields[stmt.target.id] = self.expr(stmt.value, module, {}, depth) if stmt.value else None
            elif isinstance(stmt, ast.FunctionDef) and any(isinstance(d, ast.Name) and d.id == "property"
                                                           for d in stmt.decorator_list):
                record.properties[stmt.name] = (module, stmt)
        unknown = sorted(set(kwargs) - set(record.fields))
        if unknown:
            raise Unread(f"{cls.name} has no field {unknown[0]}")
        record.fields.update(kwargs)
        record.where.update({k: where for k in kwargs})
        return record

    def read(self, module, function, args=(), kwargs=None):
        """What the recipe function returns for these arguments (a Record), or RecipeError."""
        found = self.resolve(module, function)
        if not found or found[0] in ("const", "external", "class", "module"):
            raise RecipeError(f"{self.source.show(self.path_of(module))}: no function {function}")
        result = self.call(found[0], found[1], list(args), dict(kwargs or {}), 0)
        if not isinstance(result, Record):
            raise RecipeError(f"{self.source.show(self.path_of(module))}: {function} returns no config")
        return result


_FALLTHROUGH = object()


def flatten(record, prefix=""):
    """{"model.tensor_model_parallel_size": (value, "file:line")} over a Record tree."""
    out = {}
    for key, value in record.fields.items():
        path = prefix + key
        if isinstance(value, Record):
            out[path] = (f"<{value.kind}>", record.where.get(key))
            out.update(flatten(value, path + "."))
        else:
            out[path] = (value, record.where.get(key))
    return out


def dotted(node):
    """`torch.cuda.x` -> "torch.cuda.x"; None for anything but names and attributes."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id] + parts[::-1]) if isinstance(node, ast.Name) else None


def assigned_names(stmt):
    return [n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


def assigned_keys(stmt, frame):
    """The dotted cfg attributes a statement assigns (`cfg.model.x` -> "model.x"), whatever it is."""
    keys = []
    for n in ast.walk(stmt):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
            parts, v = [n.attr], n.value
            while isinstance(v, ast.Attribute):
                parts.append(v.attr)
                v = v.value
            if isinstance(v, ast.Name):
                keys.append(".".join(reversed(parts)))
    return sorted(keys)
