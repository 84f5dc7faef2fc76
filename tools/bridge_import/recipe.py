"""Reads a Megatron-Bridge performance recipe without running it: its settings, each with the line that set it.

A recipe is a Python function that builds a ConfigContainer by plain assignments (`cfg.model.x = 4`), calls to
helpers that do the same, and constructors with keyword arguments. This module walks those functions' syntax
trees (ast, never import or exec): constants, names, dicts, comparisons, `if`, calls into the recipe packages and
constructors are followed; any other statement is *unread* and the settings it would assign are reported, so the
caller can decide whether the recipe is still known well enough (tools/bridge_import/translate.py).
"""
import ast
import os

# Only these packages' functions are followed; anything else called is a constructor (a CamelCase name: its
# keyword arguments become fields) or opaque.
FOLLOWED = ("megatron.bridge.perf_recipes", "megatron.bridge.recipes")
# mixed_precision.py's factories: the recipe kind they stand for (its fields are those of the factory's result).
PRECISION_FACTORIES = {
    "bf16_mixed": "bf16", "bf16_with_fp8_current_scaling_mixed": "fp8cs",
    "bf16_with_fp8_delayed_scaling_mixed": "fp8ds", "bf16_with_mxfp8_mixed": "fp8mx",
    "bf16_with_nvfp4_mixed": "nvfp4",
}
MAX_DEPTH = 12


class RecipeError(Exception):
    """The recipe cannot be read at all (a missing module or function)."""


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


class Reader:
    """REQUIRES: root is a Megatron-Bridge checkout; refuse(path) is True for files that must never be opened."""

    def __init__(self, root, refuse):
        self.root, self.refuse = root, refuse
        self.modules = {}
        self.unread = []  # (file:line, the cfg settings the statement would have assigned)

    # Modules -------------------------------------------------------------------------------------------------
    def path_of(self, module):
        base = os.path.join(self.root, "src", *module.split("."))
        return base + ".py" if os.path.isfile(base + ".py") else os.path.join(base, "__init__.py")

    def module(self, name):
        if name not in self.modules:
            path = self.path_of(name)
            if self.refuse(path):
                raise RecipeError(f"{path}: reserved, not opened")
            if not os.path.isfile(path):
                raise RecipeError(f"{path}: missing (module {name})")
            try:
                with open(path, encoding="utf-8") as f:
                    tree = ast.parse(f.read(), filename=path)
            except (SyntaxError, UnicodeDecodeError, ValueError) as e:
                raise RecipeError(f"{path}: not readable as Python ({type(e).__name__})") from None
            funcs, aliases, consts = {}, {}, {}
            for node in tree.body:
                if isinstance(node, ast.FunctionDef):
                    funcs[node.name] = node
                elif isinstance(node, ast.ImportFrom) and node.module:
                    for a in node.names:
                        aliases[a.asname or a.name] = (node.module, a.name)
                elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        if isinstance(t, ast.Name) and node.value is not None:
                            consts[t.id] = node.value
            self.modules[name] = {"path": path, "rel": os.path.relpath(path, self.root), "funcs": funcs,
                                  "aliases": aliases, "consts": consts}
        return self.modules[name]

    def resolve(self, module, name, depth=0):
        """(module name, FunctionDef) or ("const", value) or None, following `from x import y as z`."""
        m = self.module(module)
        if name in m["funcs"]:
            return module, m["funcs"][name]
        if name in m["consts"]:
            return "const", self.expr(m["consts"][name], module, {}, depth + 1)
        if name in m["aliases"] and depth < MAX_DEPTH:
            target, original = m["aliases"][name]
            if target.startswith(FOLLOWED):
                return self.resolve(target, original, depth + 1)
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
            self.expr(stmt.value, module, frame, depth)
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
        if isinstance(stmt, ast.Pass):
            return _FALLTHROUGH
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
            if found and found[0] == "const":
                return found[1]
            return Opaque(f"name {node.id}")
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "torch" and "torch" not in frame:
                return f"torch.{node.attr}"  # a dtype: torch.float32, torch.bfloat16
            owner = self.expr(node.value, module, frame, depth)
            if isinstance(owner, Record):
                return owner.fields.get(node.attr, Opaque(f"unset .{node.attr}"))
            return Opaque(f".{node.attr} of an unknown object")
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
                    return Opaque("an ordering comparison")
                ok = ok(left, right)
            if not ok:
                return False
            left = right
        return True

    def call_expr(self, node, module, frame, depth):
        func = node.func
        args = [self.expr(a, module, frame, depth) for a in node.args if not isinstance(a, ast.Starred)]
        kwargs = {k.arg: self.expr(k.value, module, frame, depth) for k in node.keywords if k.arg is not None}
        if isinstance(func, ast.Attribute):
            # AutoBridge.from_hf_pretrained(ID, ...).get_model_config() or .to_megatron_provider(...): the model is
            # the one the Hugging Face Hub's config.json for ID describes (the checkout does not hold it).
            inner = func.value
            if func.attr in ("get_model_config", "to_megatron_provider") and isinstance(inner, ast.Call) \
                    and isinstance(inner.func, ast.Attribute) and inner.func.attr == "from_hf_pretrained" \
                    and inner.args:
                model_id = self.expr(inner.args[0], module, frame, depth)
                if isinstance(model_id, str):
                    return Record("hf_model", {"hf_model_id": model_id})
            return Opaque(f"method .{func.attr}()")
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
            return False if isinstance(args[0], Record) else Opaque("isinstance")
        if name in PRECISION_FACTORIES:
            return Record("mixed_precision", {"recipe": PRECISION_FACTORIES[name]})
        found = self.resolve(module, name)
        if found and found[0] not in ("const", "external"):
            return self.call(found[0], found[1], args, kwargs, depth + 1)
        if found and found[0] == "external":
            name = found[1][1]
            if name in PRECISION_FACTORIES:
                return Record("mixed_precision", {"recipe": PRECISION_FACTORIES[name]})
        if name[:1].isupper():
            return Record(name, kwargs, {k: f"{self.module(module)['rel']}:{node.lineno}" for k in kwargs})
        return Opaque(f"call {name}()")

    def read(self, module, function):
        """The config the recipe function builds (a Record), or RecipeError."""
        found = self.resolve(module, function)
        if not found or found[0] in ("const", "external"):
            raise RecipeError(f"{self.path_of(module)}: no function {function}")
        result = self.call(found[0], found[1], [], {}, 0)
        if not isinstance(result, Record):
            raise RecipeError(f"{self.path_of(module)}: {function} returns no config")
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
