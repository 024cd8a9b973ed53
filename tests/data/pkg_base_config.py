# Inherits an mmpretrain base through the `pkg::` syntax, which mmengine resolves with
# get_installed_path (pkg_resources before mlkd's shim).
_base_ = ['mmpretrain::_base_/models/resnet18.py']
