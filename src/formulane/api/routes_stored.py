"""(built next)"""
from fastapi import APIRouter

router = APIRouter()
