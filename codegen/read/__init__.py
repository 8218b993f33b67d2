"""Reading robots: model files (TOML), URDFs and the origin-expression language
become typed records (codegen.read.records.Model and the parameter values),
checked for bounds and physical validity. Everything read here is untrusted data,
never evaluated.

Imports: the standard library, SymPy, defusedxml and codegen.support only; nothing
from the later stages (codegen.derive, codegen.emit, codegen.build, the pipeline).
"""
