//! The variable store: scalars and indexed arrays, each with a label, with bash's
//! dynamic scoping for `local` (a local saves the outer value and restores it on return).

use safesh_label::Label;
use std::collections::BTreeMap;

/// A variable's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A string.
    Str(String),
    /// An indexed array (sparse).
    Array(BTreeMap<i64, String>),
    /// An associative array (`declare -A`), iterated in key order.
    Assoc(BTreeMap<String, String>),
}

/// A variable.
#[derive(Debug, Clone)]
pub struct Var {
    /// Its value.
    pub value: Value,
    /// The label of its value (for arrays: every element and every key or index,
    /// since a lookup by key reveals the keys).
    pub label: Label,
    /// The label of its name: what decided that this variable exists (the PC and
    /// the word that named it when it was created). Listings of names (`${!p*}`,
    /// `declare -p`, `env`) carry it.
    pub name_label: Label,
    /// Passed to commands' environment.
    pub exported: bool,
    /// Cannot be changed or unset.
    pub readonly: bool,
    /// `declare -i` / `-l` / `-u`: how assigned values are transformed.
    pub attrs: Attrs,
}

/// Value attributes set by `declare`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Attrs {
    /// `-i`: values are evaluated as arithmetic.
    pub integer: bool,
    /// `-l`: values are lowercased.
    pub lower: bool,
    /// `-u`: values are uppercased.
    pub upper: bool,
    /// `-n`: the value names another variable, which reads and writes go to.
    pub nameref: bool,
}

impl Var {
    /// A scalar with a label.
    pub fn scalar(s: String, label: Label) -> Self {
        Var {
            value: Value::Str(s),
            name_label: label.clone(),
            label,
            exported: false,
            readonly: false,
            attrs: Attrs::default(),
        }
    }

    /// The scalar value (element 0 of an array).
    pub fn as_str(&self) -> &str {
        match &self.value {
            Value::Str(s) => s,
            Value::Array(a) => a.get(&0).map(String::as_str).unwrap_or(""),
            Value::Assoc(a) => a.get("0").map(String::as_str).unwrap_or(""),
        }
    }

    /// The label of everything a listing of this variable shows (`name=value`).
    pub fn shown_label(&self) -> Label {
        self.label.join(&self.name_label)
    }

    /// A new variable holding `value`. Its name is labeled like its first value
    /// (value ⊔ PC, which covers a name built from the same data): callers that
    /// know the name came from script text alone can lower it.
    fn new(value: Value, label: Label) -> Self {
        Var {
            value,
            name_label: label.clone(),
            label,
            exported: false,
            readonly: false,
            attrs: Attrs::default(),
        }
    }

    /// True for `declare -A` arrays.
    pub fn is_assoc(&self) -> bool {
        matches!(self.value, Value::Assoc(_))
    }
}

/// All variables of a shell.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    /// Shared with the clones of this shell until one of them changes a
    /// variable: a subshell (`$(…)`, a pipeline stage, the policy's pre-check)
    /// that only reads them never copies the table.
    map: std::sync::Arc<super::FastMap<String, Var>>,
    /// One frame per active function call: the outer values `local` displaced.
    frames: Vec<Vec<(String, Option<Var>)>>,
    /// `x=v cmd` bindings in force, innermost last (see [`Vars::push_temp`]).
    temps: Vec<TempBinding>,
    /// Names declared without a value (`local x`, `declare x`): unset, yet
    /// `declare -p x` shows them (`declare -- x`). A value in `map` wins.
    declared: std::collections::HashSet<String>,
    /// What decided that variables are gone (`unset "$n"` by a labeled word or
    /// under a labeled PC): an absence has no variable to carry a label, so every
    /// listing of names carries this one.
    gone_label: Label,
}

/// One `x=v cmd` binding: the value it displaced and the function depth it
/// was made at. `live` until the command ends or `unset x` removes it.
#[derive(Debug, Clone)]
struct TempBinding {
    name: String,
    outer: Option<Var>,
    depth: usize,
    live: bool,
}

/// Why an assignment failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadonlyError(pub String);

impl Vars {
    /// Looks a variable up.
    pub fn get(&self, name: &str) -> Option<&Var> {
        self.map.get(name)
    }

    /// Follows `declare -n` references from `name` to the variable they name.
    pub fn resolve<'a>(&'a self, name: &'a str) -> &'a str {
        self.resolve_labeled(name).0
    }

    /// [`Vars::resolve`], with the labels of the references followed: which
    /// variable is read or written depends on their values.
    pub fn resolve_labeled<'a>(&'a self, name: &'a str) -> (&'a str, Label) {
        let mut cur = name;
        let mut label = Label::empty();
        for _ in 0..8 {
            match self.map.get(cur) {
                Some(v) if v.attrs.nameref && !v.as_str().is_empty() => {
                    label.join_assign(&v.label);
                    cur = v.as_str();
                }
                _ => return (cur, label),
            }
        }
        // A cycle (`declare -n a=b b=a`): no variable; reads are empty and
        // writes fail, as in bash.
        match self.map.get(cur) {
            Some(v) if v.attrs.nameref => ("", label),
            _ => (cur, label),
        }
    }

    /// Mutable access.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Var> {
        // Shared with a clone and no such variable: nothing to change, keep
        // sharing (an unshared table takes one lookup, as before).
        if std::sync::Arc::get_mut(&mut self.map).is_none() && !self.map.contains_key(name) {
            return None;
        }
        self.table().get_mut(name)
    }

    /// The table, to change: copied first when a clone of the shell shares it.
    fn table(&mut self) -> &mut super::FastMap<String, Var> {
        std::sync::Arc::make_mut(&mut self.map)
    }

    /// Sets a scalar, keeping the export flag.
    pub fn set(&mut self, name: &str, value: String, label: Label) -> Result<(), ReadonlyError> {
        self.assigned(name);
        match self.table().get_mut(name) {
            Some(v) if v.readonly => Err(ReadonlyError(name.to_string())),
            Some(v) => {
                match &mut v.value {
                    Value::Array(a) => {
                        a.insert(0, value);
                        v.label = v.label.join(&label);
                    }
                    Value::Assoc(a) => {
                        a.insert("0".to_string(), value);
                        v.label = v.label.join(&label);
                    }
                    Value::Str(s) => {
                        *s = value;
                        v.label = label;
                    }
                }
                Ok(())
            }
            None => {
                self.table()
                    .insert(name.to_string(), Var::scalar(value, label));
                Ok(())
            }
        }
    }

    /// Sets element `idx` of an array (converting a scalar to an array).
    pub fn set_index(
        &mut self,
        name: &str,
        idx: i64,
        value: String,
        label: Label,
    ) -> Result<(), ReadonlyError> {
        self.assigned(name);
        let v = self
            .table()
            .entry(name.to_string())
            .or_insert_with(|| Var::new(Value::Array(BTreeMap::new()), label.clone()));
        if v.readonly {
            return Err(ReadonlyError(name.to_string()));
        }
        if let Value::Str(s) = &v.value {
            let mut a = BTreeMap::new();
            a.insert(0, s.clone());
            v.value = Value::Array(a);
        }
        match &mut v.value {
            Value::Array(a) => {
                a.insert(idx, value);
            }
            Value::Assoc(a) => {
                a.insert(idx.to_string(), value);
            }
            Value::Str(_) => {}
        }
        v.label = v.label.join(&label);
        Ok(())
    }

    /// Sets `name[key]` of an associative array.
    pub fn set_key(
        &mut self,
        name: &str,
        key: String,
        value: String,
        label: Label,
    ) -> Result<(), ReadonlyError> {
        self.assigned(name);
        let v = self
            .table()
            .entry(name.to_string())
            .or_insert_with(|| Var::new(Value::Assoc(BTreeMap::new()), label.clone()));
        if v.readonly {
            return Err(ReadonlyError(name.to_string()));
        }
        if let Value::Assoc(a) = &mut v.value {
            a.insert(key, value);
        }
        v.label = v.label.join(&label);
        Ok(())
    }

    /// Makes `name` an empty associative array (unless it already is one);
    /// `label` is what named it (the PC and the declaring word).
    pub fn declare_assoc(&mut self, name: &str, label: Label) {
        if self.map.get(name).is_some_and(Var::is_assoc) {
            return;
        }
        let mut var = Var::new(Value::Assoc(BTreeMap::new()), Label::empty());
        var.name_label = label;
        self.table().insert(name.to_string(), var);
    }

    /// Replaces a variable's value with a whole array.
    pub fn set_array(
        &mut self,
        name: &str,
        items: BTreeMap<i64, String>,
        label: Label,
    ) -> Result<(), ReadonlyError> {
        self.assigned(name);
        match self.table().get_mut(name) {
            Some(v) if v.readonly => Err(ReadonlyError(name.to_string())),
            Some(v) => {
                v.value = Value::Array(items);
                v.label = label;
                Ok(())
            }
            None => {
                self.table()
                    .insert(name.to_string(), Var::new(Value::Array(items), label));
                Ok(())
            }
        }
    }

    /// Removes a variable.
    pub fn unset(&mut self, name: &str) -> Result<(), ReadonlyError> {
        if self.map.get(name).is_some_and(|v| v.readonly) {
            return Err(ReadonlyError(name.to_string()));
        }
        if std::sync::Arc::get_mut(&mut self.map).is_some() || self.map.contains_key(name) {
            self.table().remove(name);
        }
        Ok(())
    }

    /// An indexed array's element number for subscript `i`: a negative one
    /// counts back from the end (`a[-1]` is the last element, as in bash).
    pub fn element_index(&self, name: &str, i: i64) -> i64 {
        if i >= 0 {
            return i;
        }
        let max = match self.map.get(name).map(|v| &v.value) {
            Some(Value::Array(a)) => a.keys().next_back().copied().unwrap_or(-1),
            Some(Value::Str(_)) => 0,
            _ => -1,
        };
        max + 1 + i
    }

    /// A value was given to `name`: no longer only declared.
    fn assigned(&mut self, name: &str) {
        if !self.declared.is_empty() {
            self.declared.remove(name);
        }
    }

    /// True when `name` was declared and given no value since (`declare -a
    /// a`, `declare -i n`, `local x`), even when it exists empty.
    pub fn declared_only(&self, name: &str) -> bool {
        self.declared.contains(name)
    }

    /// Marks `name` as declared without a value (see `declared`).
    pub fn mark_declared(&mut self, name: &str) {
        self.declared.insert(name.to_string());
    }

    /// True for a name declared without a value and not set since.
    pub fn is_declared_unset(&self, name: &str) -> bool {
        !self.map.contains_key(name) && self.declared.contains(name)
    }

    /// Records a `x=v cmd` binding about to be made: `outer` is x before it.
    pub fn push_temp(&mut self, name: &str, outer: Option<Var>) {
        self.temps.push(TempBinding {
            name: name.to_string(),
            outer,
            depth: self.frames.len(),
            live: true,
        });
    }

    /// Makes the innermost `x=v cmd` binding of `name` stay when its command
    /// ends (bash: `z=t export z` and `readonly` keep `z`).
    pub fn keep_temp(&mut self, name: &str) {
        if let Some(t) = self
            .temps
            .iter_mut()
            .rev()
            .find(|t| t.live && t.name == name)
        {
            t.live = false;
        }
    }

    /// Ends the last `n` temporary bindings, restoring what each displaced
    /// unless `unset` already removed it (then x keeps what was set since).
    pub fn pop_temps(&mut self, n: usize) {
        let keep = self.temps.len().saturating_sub(n);
        for t in self.temps.drain(keep..).rev().collect::<Vec<_>>() {
            if !t.live {
                continue;
            }
            match t.outer {
                Some(v) => {
                    self.table().insert(t.name, v);
                }
                None => {
                    self.table().remove(&t.name);
                }
            }
        }
    }

    /// `unset x` as the builtin does it: when x is a temporary binding (`x=v f`)
    /// not shadowed by a local of a function called since, removing it shows
    /// the value it displaced again (bash's scope of temporary bindings).
    pub fn unset_dynamic(&mut self, name: &str) -> Result<(), ReadonlyError> {
        if self.map.get(name).is_some_and(|v| v.readonly) {
            return Err(ReadonlyError(name.to_string()));
        }
        // A local unset in its own function stays declared there (bash).
        if self.is_local_here(name) {
            self.declared.insert(name.to_string());
        } else {
            self.declared.remove(name);
        }
        let Some(i) = self.temps.iter().rposition(|t| t.live && t.name == name) else {
            return self.unset(name);
        };
        let depth = self.temps[i].depth;
        let shadowed = self
            .frames
            .iter()
            .skip(depth)
            .any(|frame| frame.iter().any(|(n, _)| n == name));
        if shadowed {
            return self.unset(name);
        }
        let t = &mut self.temps[i];
        t.live = false;
        match t.outer.take() {
            Some(v) => {
                self.table().insert(name.to_string(), v);
            }
            None => {
                self.table().remove(name);
            }
        }
        Ok(())
    }

    /// Records that a variable was removed by a word (and PC) labeled `label`.
    pub fn gone_by(&mut self, label: &Label) {
        self.gone_label.join_assign(label);
    }

    /// The label every listing of names carries besides each name's own (see
    /// `gone_label`).
    pub fn listing_label(&self) -> &Label {
        &self.gone_label
    }

    /// Inserts a variable whole.
    pub fn insert(&mut self, name: &str, var: Var) {
        self.table().insert(name.to_string(), var);
    }

    /// Starts a function-call frame.
    pub fn push_frame(&mut self) {
        self.frames.push(Vec::new());
    }

    /// Ends a function-call frame, restoring what its locals displaced.
    pub fn pop_frame(&mut self) {
        if let Some(frame) = self.frames.pop() {
            for (name, old) in frame.into_iter().rev() {
                self.declared.remove(&name);
                match old {
                    Some(v) => {
                        self.table().insert(name, v);
                    }
                    None => {
                        self.table().remove(&name);
                    }
                }
            }
        }
    }

    /// True inside a function.
    pub fn in_function(&self) -> bool {
        !self.frames.is_empty()
    }

    /// Makes `name` local to the current function (saving the outer value once).
    /// True when `name` is already a local of the innermost function call.
    pub fn is_local_here(&self, name: &str) -> bool {
        self.frames
            .last()
            .is_some_and(|frame| frame.iter().any(|(n, _)| n == name))
    }

    pub fn make_local(&mut self, name: &str) {
        let old = self.map.get(name).cloned();
        if let Some(frame) = self.frames.last_mut() {
            if frame.iter().any(|(n, _)| n == name) {
                return;
            }
            frame.push((name.to_string(), old));
        }
    }

    /// The exported variables, as an environment.
    pub fn environment(&self) -> BTreeMap<String, String> {
        self.map
            .iter()
            // bash never puts arrays in the environment, exported or not.
            .filter(|(_, v)| v.exported && matches!(v.value, Value::Str(_)))
            .map(|(k, v)| (k.clone(), v.as_str().to_string()))
            .collect()
    }

    /// All variable names (unlabeled: for the shell's own bookkeeping; a listing
    /// shown to anyone uses [`Vars::iter`] and each variable's `name_label`).
    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.map.keys()
    }

    /// Joins `label` into the name label of `name` (when it exists): the name was
    /// given by a word carrying `label` (`declare "$n=…"`, `read "$n"`).
    pub fn name_from(&mut self, name: &str, label: &Label) {
        if let Some(v) = self.get_mut(name) {
            v.name_label.join_assign(label);
        }
    }

    /// The exported variables with the label of each (`name_label ⊔ label`), for
    /// in-process utilities that read the environment.
    pub fn labeled_environment(&self) -> BTreeMap<String, (String, Label)> {
        self.map
            .iter()
            .filter(|(_, v)| v.exported && matches!(v.value, Value::Str(_)))
            .map(|(k, v)| (k.clone(), (v.as_str().to_string(), v.shown_label())))
            .collect()
    }

    /// All variables.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Var)> {
        self.map.iter()
    }
}

/// True for a valid shell variable name (`[A-Za-z_][A-Za-z0-9_]*`).
pub(crate) fn valid_name(n: &str) -> bool {
    let mut chars = n.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
