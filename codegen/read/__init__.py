"""Reading robots: model files (TOML), URDFs and the origin-expression language
become typed records (codegen.read.records.Model and the parameter values),
checked for bounds and physical validity. Everything read here is untrusted data,
never evaluated.

Modules: the records (records) and the one capped reader of input files (files);
model and parameter files (model, model_fields) and the expression language of
their origins (expr, expr_value); physical validity of parameters (physical) and
joints that move nothing (singular); URDFs: parsed (urdf_parse), turned into
records (urdf) with exact numbers (urdf_numbers), their likely mistakes
(urdf_warnings), the summary line of a build (urdf_summary) and the records
written back as TOML files (urdf_toml).

Imports: the standard library, SymPy, defusedxml and codegen.support only; nothing
from the later stages (codegen.derive, codegen.emit, codegen.build, the pipeline).
"""
