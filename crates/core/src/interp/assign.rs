//! Assignments: `x=v`, `a[i]=v`, `a=(…)`, `m=([k]=v)`, through namerefs, with
//! readonly checks (split out of `simple.rs`).

use super::{Exec, Shell, Stop};
use safesh_label::Label;
use safesh_syntax::ast;

impl Shell {
    /// Performs one assignment in this shell.
    pub(crate) fn assign(&mut self, a: &ast::Assignment) -> Exec {
        let (ast::AssignmentName::VariableName(name)
        | ast::AssignmentName::ArrayElementName(name, _)) = &a.name;
        let created = self.vars.get(name).is_none();
        self.assign_value(a)?;
        // A variable this assignment created is named by the script text: its
        // name says only that this code ran (the PC), whatever the value holds.
        if created && let Some(v) = self.vars.get_mut(name) {
            v.name_label = Label::agent().join(&self.pc);
        }
        Ok(())
    }

    fn assign_value(&mut self, a: &ast::Assignment) -> Exec {
        match (&a.name, &a.value) {
            (ast::AssignmentName::VariableName(name), ast::AssignmentValue::Scalar(w)) => {
                let f = self.expand_assigned_value(w)?;
                let label = f.label.join(&self.pc);
                if a.append {
                    let is_array = matches!(
                        self.vars.get(name).map(|v| &v.value),
                        Some(super::Value::Array(_))
                    );
                    if is_array {
                        let cur = match self.vars.get(name).map(|v| &v.value) {
                            Some(super::Value::Array(m)) => m.get(&0).cloned().unwrap_or_default(),
                            _ => String::new(),
                        };
                        return self
                            .vars
                            .set_index(name, 0, cur + &f.text, label)
                            .map_err(|e| self.readonly_stop(&e.0));
                    }
                    let old = self
                        .vars
                        .get(name)
                        .map(|v| (v.as_str().to_string(), v.label.clone()));
                    let (cur, old_label) = old.unwrap_or_default();
                    if self.vars.get(name).is_some_and(|v| v.attrs.integer) {
                        // An empty value counts as 0 (`declare -i z; z+=5`).
                        let cur = if cur.trim().is_empty() { "0" } else { &cur };
                        let sum = self.eval_arith_data(
                            &format!("({cur}) + ({})", f.text),
                            &f.label.join(&old_label),
                        )?;
                        return self.assign_scalar(name, sum.to_string(), label.join(&old_label));
                    }
                    self.check_size(cur.len() + f.text.len())?;
                    return self.assign_scalar(name, cur + &f.text, label.join(&old_label));
                }
                self.assign_scalar(name, f.text, label)
            }
            (ast::AssignmentName::ArrayElementName(name, idx), ast::AssignmentValue::Scalar(w)) => {
                let f = self.expand_assigned_value(w)?;
                let label = f.label.join(&self.pc);
                if a.append {
                    let cur = self.element_value(name, idx)?;
                    return self.assign_element(name, idx, cur + &f.text, label);
                }
                self.assign_element(name, idx, f.text, label)
            }
            (name, ast::AssignmentValue::Array(items)) => {
                let name = match name {
                    ast::AssignmentName::VariableName(n) => n.clone(),
                    ast::AssignmentName::ArrayElementName(n, idx) => {
                        self.diag(format!("{n}[{idx}]: cannot assign list to array member"));
                        self.set_status(1);
                        return Err(Stop::Abort);
                    }
                };
                // Through a nameref to an element (`declare -n r='a[1]'; r=(x)`).
                let target = self.vars.resolve(&name).to_string();
                if target.contains('[') {
                    self.diag(format!("`{target}': not a valid identifier"));
                    self.set_status(1);
                    return Err(Stop::Abort);
                }
                // The list goes to the variable the references name.
                let name = if target.is_empty() { name } else { target };
                // A nameref with no target yet becomes an array (bash warns).
                if let Some(v) = self.vars.get_mut(&name)
                    && v.attrs.nameref
                    && !v.readonly
                {
                    v.attrs.nameref = false;
                    self.diag(format!("warning: {name}: removing nameref attribute"));
                }
                if self.vars.get(&name).is_some_and(super::Var::is_assoc) {
                    return self.assign_assoc_literal(&name, items, a.append);
                }
                let mut map = std::collections::BTreeMap::new();
                let mut label = self.pc.clone();
                let mut next: i64 = 0;
                if a.append {
                    match self.vars.get(&name).map(|v| (&v.value, v.label.clone())) {
                        Some((super::Value::Array(m), l)) => {
                            map = m.clone();
                            next = m.keys().next_back().map(|k| k + 1).unwrap_or(0);
                            label = label.join(&l);
                        }
                        Some((super::Value::Str(s), l)) => {
                            map.insert(0, s.clone());
                            next = 1;
                            label = label.join(&l);
                        }
                        Some((super::Value::Assoc(_), _)) | None => {}
                    }
                }
                for (key, value) in items {
                    match key {
                        Some(k) => {
                            let kf = self.expand_word_single(k)?;
                            let i = self.eval_arith_data(&kf.text, &kf.label)?;
                            let v = self.expand_word_single(value)?;
                            label = label.join(&v.label).join(&kf.label);
                            map.insert(i, v.text);
                            next = i + 1;
                        }
                        None => {
                            for v in self.expand_word_fields(value)? {
                                label = label.join(&v.label);
                                map.insert(next, v.text);
                                next += 1;
                            }
                        }
                    }
                }
                self.vars
                    .set_array(&name, map, label)
                    .map_err(|e| self.readonly_stop(&e.0))
            }
        }
    }

    /// `name[idx]=value` for indexed (arithmetic index) and associative (string key) arrays.
    pub(crate) fn assign_element(
        &mut self,
        name: &str,
        idx: &str,
        value: String,
        label: Label,
    ) -> Exec {
        let (resolved, via) = self.vars.resolve_labeled(name);
        let (resolved, label) = (resolved.to_string(), label.join(&via));
        // Through a nameref to an element (`declare -n r='a[0]'; r[0]=x`): not a
        // variable name to index (bash: an error that ends the complete command).
        if resolved != name && resolved.contains('[') {
            self.diag(format!("`{resolved}': not a valid identifier"));
            self.set_status(1);
            return Err(Stop::Abort);
        }
        if !via.is_empty() {
            self.vars.name_from(&resolved, &via);
        }
        let name = resolved.as_str();
        if self.vars.get(name).is_some_and(super::Var::is_assoc) {
            // A key is shown by `${!a[@]}` and decides lookups: it labels the array.
            let key = self.expand_raw_single(idx)?;
            let label = label.join(&key.label);
            return self
                .vars
                .set_key(name, key.text, value, label)
                .map_err(|e| self.readonly_stop(&e.0));
        }
        let (i, index_label) = self.eval_subscript_labeled(idx)?;
        let label = label.join(&index_label);
        let i = self.vars.element_index(name, i);
        self.vars
            .set_index(name, i, value, label)
            .map_err(|e| self.readonly_stop(&e.0))
    }

    /// The current value of `name[idx]` ("" when unset).
    pub(crate) fn element_value(&mut self, name: &str, idx: &str) -> Result<String, Stop> {
        match self.vars.get(name).map(|v| v.value.clone()) {
            Some(super::Value::Assoc(m)) => {
                let key = self.expand_raw_single(idx)?.text;
                Ok(m.get(&key).cloned().unwrap_or_default())
            }
            Some(super::Value::Array(m)) => {
                let i = self.eval_subscript(idx)?;
                let i = self.vars.element_index(name, i);
                Ok(m.get(&i).cloned().unwrap_or_default())
            }
            Some(super::Value::Str(s)) => Ok(if self.eval_subscript(idx)? == 0 {
                s
            } else {
                String::new()
            }),
            None => Ok(String::new()),
        }
    }

    fn assign_assoc_literal(
        &mut self,
        name: &str,
        items: &[(Option<ast::Word>, ast::Word)],
        append: bool,
    ) -> Exec {
        let mut map = match (append, self.vars.get(name).map(|v| v.value.clone())) {
            (true, Some(super::Value::Assoc(m))) => m,
            _ => std::collections::BTreeMap::new(),
        };
        let mut label = self.pc.clone();
        if !items.is_empty() && items.iter().all(|(k, _)| k.is_none()) {
            // `m=(k1 v1 k2 v2)`: bash 5.1+ reads words without subscripts as
            // key, value pairs (a last key alone gets ""); each word is one
            // string, never split.
            let mut words = Vec::new();
            for (_, w) in items {
                words.push(self.expand_word_single(w)?);
            }
            for pair in words.chunks(2) {
                let (k, v) = (&pair[0], pair.get(1));
                label = label.join(&k.label);
                if let Some(v) = v {
                    label = label.join(&v.label);
                }
                map.insert(
                    k.text.clone(),
                    v.map(|v| v.text.clone()).unwrap_or_default(),
                );
            }
        }
        for (key, value) in items.iter().filter(|(k, _)| k.is_some()) {
            let v = self.expand_word_single(value)?;
            label = label.join(&v.label);
            let k = match key {
                Some(k) => {
                    let k = self.expand_word_single(k)?;
                    label = label.join(&k.label);
                    k.text
                }
                None => continue,
            };
            map.insert(k, v.text);
        }
        // Mixed with `[k]=v` items, a word without a subscript is an error.
        if items.iter().any(|(k, _)| k.is_some()) {
            for (_, value) in items.iter().filter(|(k, _)| k.is_none()) {
                let v = self.expand_word_single(value)?;
                self.diag(format!(
                    "{name}: {}: must use subscript when assigning associative array",
                    v.text
                ));
            }
        }
        match self.vars.get_mut(name) {
            Some(var) if var.readonly => Err(self.readonly_stop(name)),
            Some(var) => {
                var.value = super::Value::Assoc(map);
                var.label = label;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Sets a scalar variable (or reports a readonly one).
    pub(crate) fn assign_scalar(&mut self, name: &str, value: String, label: Label) -> Exec {
        self.check_size(value.len())?;
        // Through `declare -n` references: the references chose the variable.
        let (resolved, via) = self.vars.resolve_labeled(name);
        let (resolved, label) = (resolved.to_string(), label.join(&via));
        if resolved.is_empty() {
            self.diag(format!("{name}: circular name reference"));
            self.set_status(1);
            return Err(Stop::Abort);
        }
        // Through a nameref to an element (`declare -n r='a[2]'; r=x`).
        if resolved != name
            && let Some((base, idx)) = resolved.strip_suffix(']').and_then(|r| r.split_once('['))
        {
            return self.assign_element(base, idx, value, label);
        }
        let name = resolved.as_str();
        self.commit_env(name, &label)?;
        let attrs = self.vars.get(name).map(|v| v.attrs).unwrap_or_default();
        // A nameref without a target gets one: it must name a variable.
        if attrs.nameref
            && self.vars.get(name).is_some_and(|v| v.as_str().is_empty())
            && !names_a_variable(&value)
        {
            self.diag(format!("`{value}': not a valid identifier"));
            self.set_status(1);
            return Err(Stop::Abort);
        }
        let value = if attrs.integer {
            self.eval_arith_data(&value, &label)?.to_string()
        } else if attrs.lower {
            value.to_lowercase()
        } else if attrs.upper {
            value.to_uppercase()
        } else {
            value
        };
        if name == "SHELLOPTS" {
            // Computed from the options (see `named_value`) and readonly in bash.
            return Err(self.readonly_stop(name));
        }
        self.vars
            .set(name, value, label)
            .map_err(|e| self.readonly_stop(&e.0))?;
        if !via.is_empty() {
            self.vars.name_from(name, &via);
        }
        Ok(())
    }

    /// The error for writing a readonly variable: bash reports it and the command fails.
    pub(crate) fn readonly_stop(&mut self, name: &str) -> Stop {
        let stop = self.abort(format!("{name}: readonly variable"));
        // Under `set -e` bash leaves the shell here, even in a condition
        // (`f || …`), where an arithmetic error would only end the command.
        if self.opts.errexit {
            return Stop::Exit;
        }
        stop
    }
}

/// `name` or `name[subscript]`: what a nameref may refer to.
fn names_a_variable(s: &str) -> bool {
    let base = match s.strip_suffix(']').and_then(|r| r.split_once('[')) {
        Some((base, _)) => base,
        None => s,
    };
    let mut chars = base.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
